package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// OldestPending returns when the oldest message that consumer has not yet
// delivered was stored: how long the head of its queue has been waiting.
// ok is false when nothing is pending. Messages delivered and not yet acked
// (in flight, or nak'ed with a delay for a deferred document) are not
// pending; their wait is deliberate and would make the age meaningless as
// a backlog signal.
func OldestPending(ctx context.Context, js jetstream.JetStream, stream, consumer string) (at time.Time, ok bool, err error) {
	c, err := js.Consumer(ctx, stream, consumer)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("consumer %s on %s: %w", consumer, stream, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("consumer %s on %s: %w", consumer, stream, err)
	}
	if info.NumPending == 0 {
		return time.Time{}, false, nil
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("stream %s: %w", stream, err)
	}
	filter := info.Config.FilterSubject
	if filter == "" {
		filter = ">"
	}
	// The first message after the last delivered one that matches the
	// consumer's filter is the next one it will hand out.
	msg, err := s.GetMsg(ctx, info.Delivered.Stream+1, jetstream.WithGetMsgSubject(filter))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return time.Time{}, false, nil // consumed between the two calls
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("oldest pending of %s: %w", consumer, err)
	}
	return msg.Time, true, nil
}
