package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/fairshare"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/stretchr/testify/require"
)

// With a fairshare policy, a tenant whose messages hang holds every worker
// (nobody else was waiting when they started), and another tenant's
// message, published after them, starts on a reserve worker at once
// instead of waiting for a hanging one; its handler's context names its
// tenant. The hanging tenant's further messages wait for a worker.
func TestConsumeFairReserveWorker(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publishFor(t, "hostile", 4)
	release := make(chan struct{})
	started := make(chan string, 4)
	calm := make(chan string, 1)
	h := func(ctx context.Context, d queue.Delivery) error {
		if string(d.Data[:4]) == "calm" {
			calm <- fairshare.TenantOf(ctx)
			return nil
		}
		started <- string(d.Data)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	opts := b.opts(t)
	opts.Fair = &queue.Fair{Window: 64, Policy: fairshare.Policy{Share: 50, Burst: 50, HalfLife: time.Minute}}
	opts.ShutdownGrace = time.Second
	startConsume(t, b.cons, 2, h, opts)
	require.ElementsMatch(t, []string{"hostile-00", "hostile-01"}, []string{recv(t, started), recv(t, started)})
	ackPending(t, b.cons, 4) // the other hostile messages wait in the fair queue
	b.publishFor(t, "calm", 1)
	require.Equal(t, "calm", recv(t, calm), "the calm tenant waited for the hostile one's workers")
	select {
	case id := <-started:
		t.Fatalf("%s started on the reserve worker the calm tenant left", id)
	default:
	}
	close(release)
	waitFor(t, 20*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
}
