package dispatcher

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
)

// slotStore is the system-wide part of the limit (implemented by
// *store.Store: leased rows in PostgreSQL).
type slotStore interface {
	AcquireWebhookSlot(ctx context.Context, clientID, holder string, per int, lease time.Duration) (slot int, ok bool, err error)
	ReleaseWebhookSlot(ctx context.Context, clientID string, slot int, holder string) error
}

// limiter bounds the webhook calls in flight per client
// (INTAKE_WEBHOOK_CLIENT_CONCURRENCY) across all dispatcher replicas: a
// slot is taken in this process first (so a client whose calls all run here
// bounces without a database round trip), then leased in PostgreSQL, where
// every replica's calls count. A replica killed mid-call holds its leased
// slot until the lease ends.
type limiter struct {
	per    int
	shared slotStore // nil: this process only
	lease  time.Duration
	mu     sync.Mutex
	n      map[string]int
}

func newLimiter(per int, shared slotStore, lease time.Duration) *limiter {
	return &limiter{per: per, shared: shared, lease: lease, n: map[string]int{}}
}

// tryAcquire takes a slot of client without waiting; ok is false when all
// its slots are taken, here or system-wide. release must be called exactly
// once when ok.
func (l *limiter) tryAcquire(ctx context.Context, client string) (release func(), ok bool, err error) {
	local, ok := l.local(client)
	if !ok {
		return nil, false, nil
	}
	if l.shared == nil {
		return local, true, nil
	}
	holder := uuid.NewString()
	slot, ok, err := l.shared.AcquireWebhookSlot(ctx, client, holder, l.per, l.lease)
	if err != nil || !ok {
		local()
		return nil, false, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// After a hard stop too: a slot left behind blocks the client
			// for a whole lease.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = l.shared.ReleaseWebhookSlot(rctx, client, slot, holder) // on failure the lease ends it
			local()
		})
	}, true, nil
}

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
