package fairshare

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func tenant(name string) context.Context { return WithTenant(context.Background(), name) }

// acquireLater starts an Acquire for name and returns a channel that
// yields its release once granted.
func acquireLater(t *testing.T, g *Gate, ctx context.Context) <-chan func() {
	t.Helper()
	ch := make(chan func(), 1)
	go func() {
		rel, err := g.Acquire(ctx)
		if err == nil {
			ch <- rel
		}
	}()
	return ch
}

// waitQueued blocks until the gate has n waiters.
func waitQueued(g *Gate, n int) {
	for {
		g.mu.Lock()
		k := len(g.waiters)
		g.mu.Unlock()
		if k >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// A tenant that holds nothing starts on a reserve slot while another
// tenant fills the pool; a second document of that tenant waits.
func TestReserveForIdleTenant(t *testing.T) {
	g := NewGate(2, Policy{Share: 50, Burst: 50}, nil)
	for range 2 {
		_, err := g.Acquire(tenant("a"))
		require.NoError(t, err)
	}
	relB, err := g.Acquire(tenant("b"))
	require.NoError(t, err, "b holds nothing: the reserve takes it")
	second := acquireLater(t, g, tenant("b"))
	waitQueued(g, 1)
	select {
	case <-second:
		t.Fatal("b's second document took a slot of a full pool")
	default:
	}
	relB()
	(<-second)()
}

// While b waits, a freed slot goes to b even though a asked first; a,
// alone, may fill the pool.
func TestShareWhileOthersWait(t *testing.T) {
	g := NewGate(4, Policy{Share: 50}, nil)
	var relA []func()
	for range 4 {
		rel, err := g.Acquire(tenant("a"))
		require.NoError(t, err)
		relA = append(relA, rel)
	}
	moreA := acquireLater(t, g, tenant("a"))
	waitQueued(g, 1)
	b1 := acquireLater(t, g, tenant("b"))
	waitQueued(g, 2)
	relA[0]()
	// a holds 3, above its share of 4 while b waits: the freed slot is b's.
	relB := <-b1
	select {
	case <-moreA:
		t.Fatal("a took a slot while b waited")
	default:
	}
	relA[1]()
	relB()
	select {
	case rel := <-moreA:
		rel()
	case <-time.After(5 * time.Second):
		t.Fatal("a never got the slot b gave back")
	}
}

// The tenant that used less is served first, whoever asked first.
func TestLeastCostFirst(t *testing.T) {
	l := NewLedger(time.Minute)
	l.Charge("heavy", 10*time.Second)
	g := NewGate(1, Policy{HalfLife: time.Minute}, l)
	hold, err := g.Acquire(tenant("other"))
	require.NoError(t, err)
	heavy := acquireLater(t, g, tenant("heavy"))
	waitQueued(g, 1)
	light := acquireLater(t, g, tenant("light"))
	waitQueued(g, 2)
	hold()
	rel := <-light
	select {
	case <-heavy:
		t.Fatal("heavy served while light held the slot")
	default:
	}
	rel()
	(<-heavy)()
}

// A cancelled wait leaves the queue; the slot goes to the next waiter.
func TestCancelledWait(t *testing.T) {
	g := NewGate(1, Policy{}, nil)
	hold, err := g.Acquire(tenant("a"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(tenant("b"))
	errs := make(chan error, 1)
	go func() { _, err := g.Acquire(ctx); errs <- err }()
	waitQueued(g, 1)
	next := acquireLater(t, g, tenant("c"))
	waitQueued(g, 2)
	cancel()
	require.ErrorIs(t, <-errs, context.Canceled)
	hold()
	(<-next)()
}

// Costs halve every half-life; running holds count while they run.
func TestLedgerDecayAndRunning(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := NewLedger(time.Minute)
	l.now = func() time.Time { return now }
	l.Charge("a", 8*time.Second)
	now = now.Add(time.Minute)
	require.InDelta(t, 4.0, l.Cost("a").Seconds(), 1e-6)
	end := l.Begin("b")
	now = now.Add(3 * time.Second)
	require.InDelta(t, 3.0, l.Cost("b").Seconds(), 1e-6)
	end()
	require.InDelta(t, 3.0, l.Cost("b").Seconds(), 1e-6)
	now = now.Add(time.Hour)
	l.Charge("c", time.Second) // a new account sweeps the decayed ones
	require.NotContains(t, l.accounts, "a")
	require.Zero(t, l.Cost("a"))
}

func TestPolicyShares(t *testing.T) {
	require.Equal(t, 1, Policy{Share: 50}.ShareOf(1))
	require.Equal(t, 2, Policy{Share: 50}.ShareOf(4))
	require.Equal(t, 4, Policy{}.ShareOf(4))
	require.Equal(t, 0, Policy{}.BurstOf(4))
	require.Equal(t, 1, Policy{Burst: 10}.BurstOf(4))
	require.Equal(t, 4, Policy{Burst: 100}.BurstOf(4))
}
