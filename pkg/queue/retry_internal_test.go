package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// An unanswered API request (a cluster still electing its meta leader) is
// sent again within the caller's deadline; a refusal is returned at once.
func TestRetryAPI(t *testing.T) {
	t.Parallel()
	calls := 0
	err := retryAPI(t.Context(), func(ctx context.Context) error {
		calls++
		if _, ok := ctx.Deadline(); !ok {
			t.Error("attempt without its own deadline")
		}
		if calls < 3 {
			return nats.ErrTimeout
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls, want nil after 3", err, calls)
	}

	refused := errors.New("stream name already in use with a different configuration")
	calls = 0
	err = retryAPI(t.Context(), func(context.Context) error { calls++; return refused })
	if !errors.Is(err, refused) || calls != 1 {
		t.Fatalf("err %v after %d calls, want the refusal after 1", err, calls)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err = retryAPI(ctx, func(context.Context) error { return nats.ErrNoResponders })
	if !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("err %v when the caller's deadline passed, want the last attempt's", err)
	}
}
