package queue

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderPublisher publishes a job with message headers (the W3C trace
// context of the request that created it); *Publisher is one. The relay
// uses it for outbox rows that carry headers.
type HeaderPublisher interface {
	PublishWithHeaders(ctx context.Context, subject, msgID string, payload []byte, headers map[string]string) error
}

// PublishWithHeaders is Publish with headers added to the message. The
// dedup id and the stream check are the same as Publish's.
func (p *Publisher) PublishWithHeaders(ctx context.Context, subject, msgID string, payload []byte, headers map[string]string) error {
	if msgID == "" {
		return ErrEmptyMsgID
	}
	msg := nats.NewMsg(subject)
	msg.Data = payload
	for k, v := range headers {
		msg.Header.Set(k, v)
	}
	opts := []jetstream.PublishOpt{jetstream.WithMsgID(msgID)}
	if p.stream != "" {
		opts = append(opts, jetstream.WithExpectStream(p.stream))
	}
	if _, err := p.js.PublishMsg(ctx, msg, opts...); err != nil {
		return fmt.Errorf("publish %s (%s): %w", subject, msgID, err)
	}
	return nil
}
