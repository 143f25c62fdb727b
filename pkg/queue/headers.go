package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PublishWithHeaders is Publish with headers added to the message (the W3C
// trace context of the request that created the job). The dedup id and the
// stream check are the same as Publish's.
func (p *Publisher) PublishWithHeaders(ctx context.Context, subject, msgID string, payload []byte, headers map[string]string) error {
	msg, opts, err := p.message(subject, msgID, payload, headers)
	if err != nil {
		return err
	}
	if _, err := p.js.PublishMsg(ctx, msg, opts...); err != nil {
		return fmt.Errorf("publish %s (%s): %w", subject, msgID, err)
	}
	return nil
}

// message builds a job message and its publish options: the dedup id and,
// when the publisher names one, the stream the message must land in.
func (p *Publisher) message(subject, msgID string, payload []byte, headers map[string]string) (*nats.Msg, []jetstream.PublishOpt, error) {
	if msgID == "" {
		return nil, nil, ErrEmptyMsgID
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
	return msg, opts, nil
}

// PublishBatch publishes msgs (with their dedup ids and headers) without
// waiting for each ack in turn: every message is sent, then the acks are
// awaited together, so a batch costs one round trip to the stream instead of
// one per message. The messages leave in order on one connection, so the
// stream stores them in order. It returns nil when every message was stored
// (or dropped as a duplicate), else one error per message, nil for the
// stored ones: a message whose ack did not come before ctx ended counts as
// failed (it may still land; its dedup id makes the retry harmless).
func (p *Publisher) PublishBatch(ctx context.Context, msgs []OutboxMessage) []error {
	errs := make([]error, len(msgs))
	failed := false
	fail := func(i int, err error) {
		errs[i] = fmt.Errorf("publish %s (%s): %w", msgs[i].Subject, msgs[i].MsgID, err)
		failed = true
	}
	js, err := p.asyncJS()
	if err != nil {
		for i := range msgs {
			fail(i, err)
		}
		return errs
	}
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		msg, opts, err := p.message(m.Subject, m.MsgID, m.Payload, m.Headers)
		if err == nil {
			futures[i], err = js.PublishMsgAsync(msg, opts...)
		}
		if err != nil {
			fail(i, err)
		}
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		select {
		case <-f.Ok():
		case err := <-f.Err():
			fail(i, err)
		case <-ctx.Done():
			fail(i, fmt.Errorf("waiting for the ack: %w", ctx.Err()))
		}
	}
	if !failed {
		return nil
	}
	return errs
}

// asyncJS returns the JetStream context of PublishBatch: one of its own on
// the same connection, created on first use, whose pending acks expire after
// DefaultRelayPublishTimeout. Acks that never come (a broker that
// lost the message in a disconnect) would otherwise stay pending forever and,
// once the client's limit of pending async publishes is reached, stall every
// later batch.
func (p *Publisher) asyncJS() (jetstream.JetStream, error) {
	p.asyncOnce.Do(func() {
		nc := p.js.Conn()
		if nc == nil {
			p.asyncErr = errors.New("queue: batch publishing needs a JetStream context with a connection")
			return
		}
		p.async, p.asyncErr = jetstream.New(nc,
			jetstream.WithPublishAsyncTimeout(DefaultRelayPublishTimeout))
	})
	return p.async, p.asyncErr
}
