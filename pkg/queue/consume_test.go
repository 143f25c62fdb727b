package queue_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
)

// consumeBundle is a fresh stream with its processor consumer.
type consumeBundle struct {
	js   jetstream.JetStream
	cfg  queue.Config
	cons jetstream.Consumer
	pub  *queue.Publisher
}

func setupConsume(t *testing.T, mutate func(c *queue.Config)) *consumeBundle {
	t.Helper()
	js := queuetest.JetStream(t)
	cfg := queuetest.Config(t)
	if mutate != nil {
		mutate(&cfg)
	}
	cfg = queuetest.Ensure(t, js, &cfg)
	cons, err := js.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	return &consumeBundle{js: js, cfg: cfg, cons: cons, pub: queue.NewPublisher(js, cfg.Stream)}
}

func (b *consumeBundle) publish(t *testing.T, logIDs ...string) {
	t.Helper()
	for _, id := range logIDs {
		require.NoError(t, b.pub.Publish(t.Context(), b.cfg.ProcessSubject("acme"), testMsgID(id, 1), []byte(id)))
	}
}

func (b *consumeBundle) opts(t *testing.T) queue.ConsumeOptions {
	return queue.ConsumeOptions{Logger: zaptest.NewLogger(t), Backoff: func(uint64) time.Duration { return time.Millisecond }}
}

// deliveries returns a handler that reports every delivery on the channel
// and answers with result.
func deliveries(result func(d queue.Delivery) error) (queue.Handler, chan queue.Delivery) {
	ch := make(chan queue.Delivery, 100)
	return func(_ context.Context, d queue.Delivery) error {
		ch <- d
		return result(d)
	}, ch
}

func TestConsumeAck(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, func(c *queue.Config) { c.Processor.MaxDeliver = 5 })
	b.publish(t, "L1", "L2", "L3")
	h, got := deliveries(func(queue.Delivery) error { return nil })
	startConsume(t, b.cons, 2, h, b.opts(t))

	seen := map[string]queue.Delivery{}
	for range 3 {
		d := recv(t, got)
		seen[string(d.Data)] = d
	}
	d := seen["L2"]
	require.Equal(t, b.cfg.ProcessSubject("acme"), d.Subject)
	require.Equal(t, "L2:process:1", d.MsgID)
	require.EqualValues(t, 1, d.NumDelivered)
	require.Equal(t, 5, d.MaxDeliver)
	require.False(t, d.LastAttempt())
	require.Equal(t, b.cfg.Stream, d.Stream)
	require.Equal(t, "processor", d.Consumer)
	require.NotZero(t, d.StreamSeq)
	require.False(t, d.Published.IsZero())
	// Acked messages leave the work queue.
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
	require.Empty(t, got, "no redelivery")
}

func TestConsumePermanentTerminates(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publish(t, "L1")
	h, got := deliveries(func(queue.Delivery) error { return queue.Permanent(errors.New("not a PDF")) })
	startConsume(t, b.cons, 1, h, b.opts(t))
	recv(t, got)
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
	require.Empty(t, got, "a terminated message is not redelivered")
}

func TestConsumeRetryAfterNaksWithDelay(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publish(t, "L1")
	const delay = 300 * time.Millisecond
	var firstAt time.Time
	var againAfter atomic.Int64
	h, got := deliveries(func(d queue.Delivery) error {
		if d.NumDelivered == 1 {
			firstAt = time.Now()
			return queue.RetryAfter(delay, errors.New("mapping missing"))
		}
		againAfter.Store(int64(time.Since(firstAt)))
		return nil
	})
	startConsume(t, b.cons, 1, h, b.opts(t))
	require.EqualValues(t, 1, recv(t, got).NumDelivered)
	require.EqualValues(t, 2, recv(t, got).NumDelivered)
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
	// The server never redelivers before the nak delay (a lower bound only).
	require.GreaterOrEqual(t, time.Duration(againAfter.Load()), delay)
}

func TestConsumeErrorRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publish(t, "L1")
	h, got := deliveries(func(d queue.Delivery) error {
		if d.NumDelivered < 3 {
			return errors.New("database busy")
		}
		return nil
	})
	startConsume(t, b.cons, 1, h, b.opts(t))
	for want := uint64(1); want <= 3; want++ {
		require.Equal(t, want, recv(t, got).NumDelivered)
	}
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
}

func TestConsumeLastAttemptTerminates(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, func(c *queue.Config) { c.Processor.MaxDeliver = 2 })
	b.publish(t, "L1")
	h, got := deliveries(func(queue.Delivery) error { return errors.New("still failing") })
	startConsume(t, b.cons, 1, h, b.opts(t))
	require.False(t, recv(t, got).LastAttempt())
	last := recv(t, got)
	require.True(t, last.LastAttempt())
	// Terminated, not left in the work queue forever.
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
	st, err := queue.Stats(t.Context(), b.js, b.cfg.Stream, "processor")
	require.NoError(t, err)
	require.Zero(t, st.AckPending)
}

func TestConsumePanicIsRetried(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publish(t, "L1")
	h, got := deliveries(func(d queue.Delivery) error {
		if d.NumDelivered == 1 {
			panic("nil map")
		}
		return nil
	})
	startConsume(t, b.cons, 1, h, b.opts(t))
	require.EqualValues(t, 1, recv(t, got).NumDelivered)
	require.EqualValues(t, 2, recv(t, got).NumDelivered)
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
}

func TestConsumeSoftStopFinishesInFlight(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publish(t, "L1")
	started, release := make(chan struct{}), make(chan struct{})
	var ctxErr atomic.Value
	h := func(ctx context.Context, _ queue.Delivery) error {
		close(started)
		<-release
		ctxErr.Store(fmt.Sprint(ctx.Err()))
		return nil
	}
	stop := startConsume(t, b.cons, 1, h, b.opts(t))
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// While L1 still runs, the loop sees the cancellation and naks the three
	// buffered messages: only L1 stays pending. (Releasing L1 first would let
	// the loop take L2 as ordinary work before it sees the cancellation.)
	waitFor(t, 10*time.Second, func() error {
		st, err := queue.Stats(t.Context(), b.js, b.cfg.Stream, "processor")
		if err == nil && st.AckPending != 1 {
			err = fmt.Errorf("ack pending %d, want 1 (L1)", st.AckPending)
		}
		return err
	})
	close(release)
	require.NoError(t, recv(t, stopped))
	require.Equal(t, "<nil>", ctxErr.Load(), "soft stop does not cancel the handler")
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
}

func TestConsumeHardStopNaks(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil) // AckWait 30s: only a Nak gets the message back quickly
	b.publish(t, "L1")
	started := make(chan struct{})
	h := func(ctx context.Context, _ queue.Delivery) error {
		close(started)
		<-ctx.Done() // a handler stuck until the hard stop
		return ctx.Err()
	}
	opts := b.opts(t)
	opts.ShutdownGrace = time.Millisecond
	stop := startConsume(t, b.cons, 1, h, opts)
	<-started
	require.NoError(t, stop())

	h2, got := deliveries(func(queue.Delivery) error { return nil })
	startConsume(t, b.cons, 1, h2, b.opts(t))
	require.EqualValues(t, 2, recv(t, got).NumDelivered, "a peer gets the message at once")
}

// progressCounting wraps a consumer so the test sees every InProgress call.
type progressCounting struct {
	jetstream.Consumer
	progress chan struct{}
}

func (c progressCounting) Messages(opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, error) {
	it, err := c.Consumer.Messages(opts...)
	return progressIter{MessagesContext: it, progress: c.progress}, err
}

type progressIter struct {
	jetstream.MessagesContext
	progress chan struct{}
}

func (it progressIter) Next(opts ...jetstream.NextOpt) (jetstream.Msg, error) {
	m, err := it.MessagesContext.Next(opts...)
	if err != nil {
		return nil, err
	}
	return progressMsg{Msg: m, progress: it.progress}, nil
}

type progressMsg struct {
	jetstream.Msg
	progress chan struct{}
}

func (m progressMsg) InProgress() error {
	err := m.Msg.InProgress()
	select {
	case m.progress <- struct{}{}:
	default:
	}
	return err
}

func TestConsumeHeartbeatKeepsMessage(t *testing.T) {
	t.Parallel()
	// Generous, so that a stalled CI machine (a late heartbeat) does not
	// look like a missing one.
	const ackWait = 2 * time.Second
	b := setupConsume(t, func(c *queue.Config) {
		c.Processor.AckWait = ackWait
	})
	b.publish(t, "L1")
	progress := make(chan struct{}, 100)
	var redelivered atomic.Bool
	var calls, beats atomic.Int32
	h := func(_ context.Context, d queue.Delivery) error {
		if calls.Add(1) > 1 || d.NumDelivered > 1 {
			redelivered.Store(true)
			return nil
		}
		// Stay busy for 4 heartbeats (4/3 AckWait): without them the
		// server would hand the message to the second worker.
		timeout := time.After(3 * ackWait)
		for range 4 {
			select {
			case <-progress:
				beats.Add(1)
			case <-timeout: // no heartbeats: give up, the asserts below fail
				return nil
			}
		}
		return nil
	}
	startConsume(t, progressCounting{Consumer: b.cons, progress: progress}, 2, h, b.opts(t))
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
	require.False(t, redelivered.Load(), "the message was redelivered while its handler was running")
	require.EqualValues(t, 1, calls.Load())
	require.EqualValues(t, 4, beats.Load())
}

func TestConsumeConcurrencyBound(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	b.publish(t, "L1", "L2", "L3", "L4", "L5", "L6")
	var running, peak atomic.Int32
	started := make(chan string, 10)
	release := make(chan struct{})
	h := func(_ context.Context, d queue.Delivery) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		started <- string(d.Data)
		<-release
		running.Add(-1)
		return nil
	}
	startConsume(t, b.cons, 2, h, b.opts(t))
	seen := map[string]bool{}
	seen[recv(t, started)] = true
	seen[recv(t, started)] = true
	for range 4 {
		release <- struct{}{} // free one slot, then one more handler starts
		seen[recv(t, started)] = true
	}
	release <- struct{}{}
	release <- struct{}{}
	require.Len(t, seen, 6)
	require.EqualValues(t, 2, peak.Load())
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), b.js, b.cfg.Stream, 0))
}

// TestConsumeReusesWorkers: handlers run on `concurrency` long-lived
// goroutines, not one new goroutine per message (each new one grew its
// stack again through the handler's deep call chains).
func TestConsumeReusesWorkers(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	var ids []string
	for i := range 20 {
		ids = append(ids, fmt.Sprintf("L%d", i))
	}
	b.publish(t, ids...)
	var mu sync.Mutex
	goroutines := map[string]bool{}
	done := make(chan struct{}, len(ids))
	h := func(_ context.Context, d queue.Delivery) error {
		mu.Lock()
		goroutines[goroutineID()] = true
		mu.Unlock()
		done <- struct{}{}
		return nil
	}
	startConsume(t, b.cons, 2, h, b.opts(t))
	for range ids {
		recv(t, done)
	}
	mu.Lock()
	defer mu.Unlock()
	require.LessOrEqual(t, len(goroutines), 2, "20 messages on at most 2 worker goroutines")
}

// goroutineID is the calling goroutine's number from its stack header
// ("goroutine 42 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}

func TestConsumeReturnsErrorWhenConsumerDeleted(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		done <- queue.Consume(ctx, b.cons, 1, func(context.Context, queue.Delivery) error { return nil }, b.opts(t))
	})
	// Wait until the pull request is parked on the server, then delete.
	waitFor(t, 10*time.Second, func() error {
		st, err := queue.Stats(t.Context(), b.js, b.cfg.Stream, "processor")
		if err == nil && st.Waiting == 0 {
			err = errors.New("no pull request yet")
		}
		return err
	})
	require.NoError(t, b.js.DeleteConsumer(t.Context(), b.cfg.Stream, "processor"))
	require.Error(t, recv(t, done))
	wg.Wait()
}

func TestConsumeArguments(t *testing.T) {
	t.Parallel()
	b := setupConsume(t, nil)
	h := func(context.Context, queue.Delivery) error { return nil }
	require.Error(t, queue.Consume(t.Context(), b.cons, 0, h, queue.ConsumeOptions{}))
	require.Panics(t, func() { _ = queue.Consume(t.Context(), b.cons, 1, nil, queue.ConsumeOptions{}) })
}

func TestConsumeShutdownReturnsPrefetched(t *testing.T) {
	t.Parallel()
	// Two workers on their own connections, as two processes would be. The
	// first stops while it holds prefetched, unstarted messages: it naks
	// them after stopping its iterator and closes its connection. Usually
	// the peer gets them at once; a nak that races the server's removal of
	// the stopped pull request lands on it instead and comes back after
	// AckWait (short here). Either way none is lost or started twice.
	srv := queuetest.Server(t)
	nc1, js1 := queuetest.Connect(t, srv.ClientURL())
	_, js2 := queuetest.Connect(t, srv.ClientURL())
	c := queuetest.Config(t)
	c.Processor.AckWait = 3 * time.Second
	cfg := queuetest.Ensure(t, js1, &c)
	b := &consumeBundle{js: js1, cfg: cfg, pub: queue.NewPublisher(js1, cfg.Stream)}
	var err error
	b.cons, err = js1.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	b.publish(t, "L1", "L2", "L3", "L4")
	started, release := make(chan string, 4), make(chan struct{})
	h := func(_ context.Context, d queue.Delivery) error {
		started <- string(d.Data)
		<-release
		return nil
	}
	opts := b.opts(t)
	opts.Prefetch = 3
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- queue.Consume(ctx, b.cons, 1, h, opts) }()
	first := recv(t, started)
	// Wait until the client holds the other messages in its buffer.
	waitFor(t, 10*time.Second, func() error {
		st, err := queue.Stats(t.Context(), b.js, b.cfg.Stream, "processor")
		if err == nil && st.AckPending < 3 {
			err = fmt.Errorf("ack pending %d, want at least 3", st.AckPending)
		}
		return err
	})
	cancel()       // soft stop first, so the freed slot cannot take new work
	close(release) // the running handler finishes and is acked
	require.NoError(t, recv(t, stopped))
	require.Empty(t, started, "no prefetched message was started after the stop")
	nc1.Close()

	cons2, err := js2.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	h2, got := deliveries(func(queue.Delivery) error { return nil })
	startConsume(t, cons2, 3, h2, b.opts(t))
	seen := map[string]bool{}
	deadline := time.After(30 * time.Second) // AckWait (3 s) plus pull expiry (5 s) plus a loaded machine
	for len(seen) < 3 {
		select {
		case d := <-got:
			seen[string(d.Data)] = true
		case <-deadline:
			t.Fatalf("only %v came back", seen)
		}
	}
	require.NotContains(t, seen, first, "the started message was acked")
	require.Len(t, seen, 3)
	waitFor(t, 10*time.Second, wantMsgs(t.Context(), js2, b.cfg.Stream, 0))
}
