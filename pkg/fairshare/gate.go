package fairshare

import (
	"context"
	"sync"
	"time"
)

// Gate is a semaphore of Slots shared by tenants under a Policy: Acquire
// waits for a slot, and a freed slot goes to the waiter Slots.Choose names
// (first come first served within a tenant). The time a slot is held is
// charged to its tenant in the ledger. Safe for concurrent use.
type Gate struct {
	ledger *Ledger // nil: no cost order

	mu      sync.Mutex
	slots   *Slots
	waiters []*waiter // in arrival order
}

type waiter struct {
	tenant  string
	granted chan Grant // buffered: dispatch never blocks
}

// NewGate returns a gate of size slots. ledger may be shared with other
// gates of the same tenants; nil makes one when p.HalfLife is set.
func NewGate(size int, p Policy, ledger *Ledger) *Gate {
	if ledger == nil && p.HalfLife > 0 {
		ledger = NewLedger(p.HalfLife)
	}
	return &Gate{ledger: ledger, slots: NewSlots(size, p)}
}

// Acquire waits for a slot for ctx's tenant (TenantOf) and returns the
// func that releases it (call it once). It fails only with ctx's error.
func (g *Gate) Acquire(ctx context.Context) (release func(), err error) {
	tenant := TenantOf(ctx)
	w := &waiter{tenant: tenant, granted: make(chan Grant, 1)}
	g.mu.Lock()
	g.waiters = append(g.waiters, w)
	g.dispatch()
	g.mu.Unlock()
	select {
	case gr := <-w.granted:
		return g.holding(gr), nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case gr := <-w.granted: // granted meanwhile: hand it on
		g.slots.Release(gr)
	default:
		g.remove(w)
	}
	g.dispatch() // a waiter fewer may lift another tenant's share cap
	return nil, ctx.Err()
}

// holding starts charging the grant's time and returns its release.
func (g *Gate) holding(gr Grant) func() {
	end := func() {}
	if g.ledger != nil {
		end = g.ledger.Begin(gr.Tenant)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			end()
			g.mu.Lock()
			defer g.mu.Unlock()
			g.slots.Release(gr)
			g.dispatch()
		})
	}
}

// dispatch grants slots to waiters as long as Slots allows. Called with mu
// held.
func (g *Gate) dispatch() {
	var cost func(string) time.Duration
	if g.ledger != nil {
		cost = g.ledger.Cost
	}
	for len(g.waiters) > 0 {
		tenants := make([]string, len(g.waiters))
		for i, w := range g.waiters {
			tenants[i] = w.tenant
		}
		i, ok := g.slots.Choose(tenants, cost)
		if !ok {
			return
		}
		w := g.waiters[i] // the tenant's earliest: Choose returns the first index of a tie
		g.remove(w)
		w.granted <- g.slots.Take(w.tenant)
	}
}

func (g *Gate) remove(w *waiter) {
	for i, x := range g.waiters {
		if x == w {
			g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
			return
		}
	}
}
