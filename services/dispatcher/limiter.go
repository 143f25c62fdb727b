package dispatcher

import (
	"context"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/store"
	"github.com/google/uuid"
)

// limiter bounds the webhook calls in flight per client
// (INTAKE_WEBHOOK_CLIENT_CONCURRENCY) across all dispatcher replicas: a
// job takes a slot in this process first (so a client whose calls all run
// here bounces without a database round trip), then a slot leased in
// PostgreSQL, where every replica's calls count, in the statement that
// claims the delivery. The statement that records the attempt releases the
// leased slot. A replica killed mid-call holds it until the lease ends.
type limiter struct {
	per   int
	st    *store.Store
	lease time.Duration
	mu    sync.Mutex
	n     map[string]int
}

func newLimiter(per int, st *store.Store, lease time.Duration) *limiter {
	return &limiter{per: per, st: st, lease: lease, n: map[string]int{}}
}

// local takes one of client's slots in this process without waiting; ok
// is false when all are taken. release must be called exactly once when ok.
func (l *limiter) local(client string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[client] >= l.per {
		return nil, false
	}
	l.n[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.n[client]--; l.n[client] == 0 {
				delete(l.n, client)
			}
		})
	}, true
}

// claim claims the delivery id of client for lease together with a shared
// slot (store.ClaimDelivery). When claimed, the slot is held until
// heldSlot.record records the attempt or heldSlot.release gives it back;
// the caller defers release.
func (l *limiter) claim(ctx context.Context, client, id string, lease time.Duration) (store.Delivery, *heldSlot, store.ClaimResult, error) {
	h := &heldSlot{st: l.st, slot: store.WebhookSlot{ClientID: client, Holder: uuid.NewString(), Per: l.per, Lease: l.lease}}
	dv, res, err := l.st.ClaimDelivery(ctx, id, lease, h.slot)
	if err != nil {
		// The statement may have committed before its answer was lost
		// (a cancelled context): give back what it may have leased (a
		// no-op otherwise).
		h.held = true
		h.release(ctx)
		return store.Delivery{}, nil, 0, err
	}
	if res != store.Claimed {
		return store.Delivery{}, nil, res, nil
	}
	h.held = true
	return dv, h, res, nil
}

// heldSlot is the shared slot of a claimed delivery.
type heldSlot struct {
	st   *store.Store
	slot store.WebhookSlot
	held bool
}

// record records the attempt and releases the slot in the same statement.
// On an error the slot counts as held: release gives it back (a no-op if
// the statement did release it before its answer was lost).
func (h *heldSlot) record(ctx context.Context, r store.AttemptResult) (store.Delivery, error) {
	r.Slot = &h.slot
	dv, err := h.st.RecordAttempt(ctx, r)
	if err == nil {
		h.held = false
	}
	return dv, err
}

// release gives the slot back unless record did: on the paths that record
// no attempt after a claim, and when recording failed. It runs after a
// hard stop too: a slot left behind blocks the client for a whole lease.
func (h *heldSlot) release(ctx context.Context) {
	if !h.held {
		return
	}
	h.held = false
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = h.st.ReleaseWebhookSlot(rctx, h.slot) // on failure the lease ends it
}
