// Package fairshare shares a pool of slots (a processor's workers, the PDF
// helpers) between tenants so that one tenant's worst input costs that
// tenant and nobody else. It is what multi-tenant job systems do (River's
// and Svix's per-tenant limits, a CI service's per-project concurrency):
//
//   - a share: while other tenants wait, a tenant holds at most
//     Policy.Share percent of the slots (at least one);
//   - a burst reserve: a tenant that holds nothing may start on one of
//     Policy.Burst percent extra slots when the pool is full, so a quiet
//     tenant never waits for another tenant's running work to finish (the
//     pool cannot preempt a document once it runs; the reserve is what
//     bounds the quiet tenant's wait);
//   - least measured cost first: waiters are served in the order of what
//     their tenant used recently (slot time, the running holds included,
//     decaying with Policy.HalfLife), so a tenant whose documents are
//     expensive, a flate bomb or a flood, is served after tenants who used
//     less: weighted fair queuing by measured cost, without weights to
//     configure.
//
// The zero Policy is a plain FIFO semaphore (no share, no reserve, no cost
// order); services fill it from configuration (INTAKE_CLIENT_SHARE,
// INTAKE_CLIENT_BURST, INTAKE_CLIENT_COST_HALF_LIFE).
package fairshare

import (
	"context"
	"math"
	"sync"
	"time"
)

// Policy says how a pool is shared.
type Policy struct {
	// Share is the percentage of the pool's slots one tenant may hold while
	// another tenant waits, at least one slot. 0 or 100: no cap.
	Share int
	// Burst is extra slots, in percent of the pool (at least one when
	// positive), that only a tenant holding no slot may use when the pool
	// is full. 0: none.
	Burst int
	// HalfLife is how fast a tenant's measured cost decays; 0 serves
	// waiters in turn (tenant by tenant, first come first served within a
	// tenant) instead of least cost first.
	HalfLife time.Duration
}

// ShareOf is the most slots of a pool of n one tenant may hold while
// others wait.
func (p Policy) ShareOf(n int) int {
	if p.Share <= 0 || p.Share >= 100 {
		return n
	}
	return max(1, n*p.Share/100)
}

// BurstOf is the number of reserve slots of a pool of n.
func (p Policy) BurstOf(n int) int {
	if p.Burst <= 0 {
		return 0
	}
	return max(1, n*p.Burst/100)
}

type tenantKey struct{}

// WithTenant returns ctx naming tenant as the one its work is done for.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantOf returns the tenant WithTenant put in ctx, "" when none (all
// such work counts as one tenant).
func TenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// Ledger measures what each tenant used: slot time, decayed exponentially
// with a half-life (a sliding window without the cliff), plus the time its
// running holds have taken so far, so a document that runs for seconds
// counts while it runs. Safe for concurrent use.
type Ledger struct {
	halfLife time.Duration
	now      func() time.Time

	mu       sync.Mutex
	accounts map[string]*account
}

type account struct {
	cost    float64   // seconds, as of at
	at      time.Time // when cost was last decayed
	running int       // holds begun and not ended
	started float64   // sum of the running holds' start times (unix seconds)
}

// NewLedger returns a ledger whose costs halve every halfLife (> 0).
func NewLedger(halfLife time.Duration) *Ledger {
	return &Ledger{halfLife: halfLife, now: time.Now, accounts: map[string]*account{}}
}

// Begin starts a hold for tenant; the returned func ends it and charges its
// duration. Call it exactly once.
func (l *Ledger) Begin(tenant string) (end func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := l.now()
	a := l.account(tenant, start)
	a.running++
	a.started += seconds(start)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		now := l.now()
		a := l.account(tenant, now)
		a.running--
		a.started -= seconds(start)
		a.cost += now.Sub(start).Seconds()
		if a.running == 0 {
			a.started = 0 // no rounding residue left behind
		}
	}
}

// Charge adds d to tenant's cost (work measured outside a hold).
func (l *Ledger) Charge(tenant string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.account(tenant, l.now()).cost += d.Seconds()
}

// Cost is tenant's decayed cost plus its running holds' time so far.
func (l *Ledger) Cost(tenant string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Duration(l.costAt(tenant, l.now()) * float64(time.Second))
}

func (l *Ledger) costAt(tenant string, now time.Time) float64 {
	a, ok := l.accounts[tenant]
	if !ok {
		return 0
	}
	c := a.cost * l.decay(now.Sub(a.at))
	return c + float64(a.running)*seconds(now) - a.started
}

// account returns tenant's account with its cost decayed to now, and
// forgets accounts that have decayed to nothing, so the map stays as small
// as the set of recently active tenants.
func (l *Ledger) account(tenant string, now time.Time) *account {
	a, ok := l.accounts[tenant]
	if !ok {
		a = &account{at: now}
		l.accounts[tenant] = a
		l.sweep(now)
		return a
	}
	a.cost *= l.decay(now.Sub(a.at))
	a.at = now
	return a
}

// sweep drops idle accounts below a millisecond of cost; called when an
// account is added, so its cost is amortised over the tenants that come.
func (l *Ledger) sweep(now time.Time) {
	for t, a := range l.accounts {
		if a.running == 0 && a.cost*l.decay(now.Sub(a.at)) < 1e-3 && !a.at.Equal(now) {
			delete(l.accounts, t)
		}
	}
}

func (l *Ledger) decay(d time.Duration) float64 {
	if d <= 0 {
		return 1
	}
	return math.Exp2(-d.Seconds() / l.halfLife.Seconds())
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
