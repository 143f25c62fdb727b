package queue_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/queue"
)

func (b *consumeBundle) publishFor(t *testing.T, tenant string, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("%s-%02d", tenant, i)
		require.NoError(t, b.pub.Publish(t.Context(), b.cfg.ProcessSubject(tenant), testMsgID(id, 1), []byte(id)))
	}
}

// ackPending waits until the consumer has delivered want messages that are
// not yet acked (all of them pulled into the fair queue or running).
func ackPending(t *testing.T, cons jetstream.Consumer, want int) {
	t.Helper()
	waitFor(t, 20*time.Second, func() error {
		info, err := cons.Info(t.Context())
		if err != nil {
			return err
		}
		if info.NumAckPending != want {
			return fmt.Errorf("ack pending %d, want %d", info.NumAckPending, want)
		}
		return nil
	})
}

// One tenant floods the queue before another's two messages arrive; with a
// single worker the other tenant's messages are worked on in turn with the
// flood's (within its first four), not after it (13th and 14th in stream
// order).
func TestConsumeFairTakesTenantsInTurn(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publishFor(t, "flood", 12)
	b.publishFor(t, "calm", 2)
	gate := make(chan struct{})
	var order []string
	done := make(chan string, 14)
	h := func(_ context.Context, d queue.Delivery) error {
		<-gate
		done <- string(d.Data)
		return nil
	}
	opts := b.opts(t)
	var held atomic.Int64
	opts.Fair = &queue.Fair{Window: 64, Held: func(n int) { held.Store(int64(n)) }}
	startConsume(t, b.cons, 1, h, opts)
	ackPending(t, b.cons, 14) // everything is pulled before the first finishes
	// ... and sorted into the tenants' queues: the client library buffers
	// what the broker counts as delivered, so ack pending alone does not say
	// the window has seen calm's messages yet.
	waitFor(t, 20*time.Second, func() error {
		if n := held.Load(); n != 13 {
			return fmt.Errorf("window holds %d, want 13 (one is in the worker)", n)
		}
		return nil
	})
	close(gate)
	for range 14 {
		order = append(order, recv(t, done))
	}
	for _, id := range []string{"calm-00", "calm-01"} {
		require.LessOrEqual(t, slices.Index(order, id), 3, "%s waited behind the flood: %v", id, order)
	}
	require.Equal(t, []string{"flood-00", "flood-01", "flood-02"}, slices.DeleteFunc(slices.Clone(order)[:5],
		func(s string) bool { return s[:4] == "calm" }), "each tenant's own messages keep their order")
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
}

// PerTenant caps one tenant's messages in flight: with two workers and a cap
// of one, a tenant whose messages hang (hostile PDFs) holds one worker, and
// another tenant's message, published after the hostile ones, is handled
// meanwhile on the other (without the cap, the second worker would be
// hanging on the next hostile message).
func TestConsumeFairCapsTenantInFlight(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publishFor(t, "hostile", 4)
	release := make(chan struct{})
	var running, most atomic.Int32
	started := make(chan string, 4)
	calm := make(chan string, 1)
	h := func(ctx context.Context, d queue.Delivery) error {
		if string(d.Data[:4]) == "calm" {
			calm <- string(d.Data)
			return nil
		}
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		started <- string(d.Data)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	opts := b.opts(t)
	opts.Fair = &queue.Fair{Window: 64, PerTenant: 1}
	opts.ShutdownGrace = time.Second
	startConsume(t, b.cons, 2, h, opts)
	require.Equal(t, "hostile-00", recv(t, started))
	ackPending(t, b.cons, 4) // the other hostile messages wait in the fair queue
	b.publishFor(t, "calm", 1)
	require.Equal(t, "calm-00", recv(t, calm), "the calm tenant is served while the hostile one hangs")
	require.EqualValues(t, 1, most.Load(), "the hostile tenant never held both workers")
	close(release)
	waitFor(t, 20*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
	require.EqualValues(t, 1, most.Load())
}

func TestLastToken(t *testing.T) {
	require.Equal(t, "acme", queue.LastToken("intake.process.acme"))
	require.Equal(t, "x", queue.LastToken("x"))
}
