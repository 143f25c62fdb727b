package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/docintake/docintake/pkg/queue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor polls check until it returns nil, failing the test with the last
// error after timeout.
func waitFor(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %v", timeout, err)
		}
		<-tick.C
	}
}

// recv waits for one value from ch.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting on channel")
		panic("unreachable")
	}
}

// streamMsgs returns how many messages the stream holds.
func streamMsgs(ctx context.Context, js jetstream.JetStream, stream string) (uint64, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// wantMsgs is a waitFor check for the stream size.
func wantMsgs(ctx context.Context, js jetstream.JetStream, stream string, want uint64) func() error {
	return func() error {
		n, err := streamMsgs(ctx, js, stream)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("stream holds %d messages, want %d", n, want)
		}
		return nil
	}
}

// startConsume runs queue.Consume until the returned stop is called or the
// test ends; stop returns Consume's result.
func startConsume(t *testing.T, cons jetstream.Consumer, concurrency int, h queue.Handler, opts queue.ConsumeOptions) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- queue.Consume(ctx, cons, concurrency, h, opts) }()
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(30 * time.Second):
				result = errors.New("Consume did not return within 30s of cancel")
			}
		})
		return result
	}
	t.Cleanup(func() { require.NoError(t, stop()) })
	return stop
}
