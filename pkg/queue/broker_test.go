package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
)

// TestBrokerCrashAndRestart kills the nats-server process (SIGKILL) while a
// relay and a consumer are running, commits outbox rows while it is down and
// restarts it: every job is published and handled once.
func TestBrokerCrashAndRestart(t *testing.T) {
	t.Parallel()
	broker := queuetest.StartProcess(t)
	_, js := queuetest.Connect(t, broker.URL())
	cfg := queuetest.Ensure(t, js, nil)

	src := newMemOutbox()
	relay := queue.NewRelay(src, queue.NewPublisher(js, cfg.Stream), zaptest.NewLogger(t),
		queue.RelayOptions{PollInterval: 20 * time.Millisecond})
	runRelay(t, relay)

	var mu sync.Mutex
	handled := map[string]int{}
	got := make(chan string, 100)
	cons, err := js.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	startConsume(t, cons, 2, func(_ context.Context, d queue.Delivery) error {
		mu.Lock()
		handled[d.MsgID]++
		mu.Unlock()
		got <- d.MsgID
		return nil
	}, queue.ConsumeOptions{Logger: zaptest.NewLogger(t)})

	add := func(from, to int) {
		var rows []queue.OutboxMessage
		for i := from; i < to; i++ {
			logID := fmt.Sprintf("L%d", i)
			rows = append(rows, src.add(cfg.ProcessSubject("acme"), testMsgID(logID, 1), logID))
		}
		relay.Handoff(rows)
	}
	add(0, 3)
	for range 3 {
		recv(t, got)
	}
	// Acks are fire-and-forget: one still in flight when the broker dies is
	// lost and its job redelivered (at-least-once). Let them land first, so
	// that a second delivery below can only come from a duplicate publish.
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), js, cfg.Stream, 0))

	broker.Kill()
	add(3, 6) // committed while the broker is down: stays in the outbox
	broker.Start()

	for range 3 {
		recv(t, got)
	}
	waitFor(t, 10*time.Second, func() error {
		if n := src.unsent(); n != 0 {
			return fmt.Errorf("%d outbox rows unsent", n)
		}
		return nil
	})
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), js, cfg.Stream, 0))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, handled, 6)
	for id, n := range handled {
		require.Equal(t, 1, n, "job %s handled %d times", id, n)
	}
}
