package queue

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/jobs"

	"go.uber.org/zap"
)

// OutboxMessage is one committed outbox row: a job to publish (see
// jobs.Message, the one outbox row type).
type OutboxMessage = jobs.Message

// OutboxSource is the outbox table (implemented by pkg/store).
type OutboxSource interface {
	// RelayOutbox claims up to limit unsent rows (FOR UPDATE SKIP LOCKED in
	// one transaction, so several relays never publish the same row at the
	// same time), calls publish for each in order, marks the published ones
	// sent and commits. A publish error stops the batch (rows published
	// before it are still marked). Returns how many were marked.
	RelayOutbox(ctx context.Context, limit int, publish func(ctx context.Context, m OutboxMessage) error) (int, error)
}

// MessagePublisher publishes one job with a dedup id; *Publisher is one.
type MessagePublisher interface {
	Publish(ctx context.Context, subject, msgID string, payload []byte) error
}

// RelayOptions tune a Relay; the zero value is usable.
type RelayOptions struct {
	// BatchSize is the number of rows claimed per transaction. Defaults to
	// 100.
	BatchSize int
	// PollInterval is how often the relay looks for rows nobody notified it
	// about (committed by another process, or left by a failed batch).
	// Defaults to 1s.
	PollInterval time.Duration
}

// Relay moves committed outbox rows to JetStream. A row is published before
// it is marked sent; if the relay dies in between, the row is published
// again later with the same Nats-Msg-Id and the stream drops the copy
// (within its duplicates window), so every job reaches the stream once.
type Relay struct {
	src    OutboxSource
	pub    MessagePublisher
	logger *zap.Logger
	opts   RelayOptions
	wake   chan struct{}
}

// NewRelay returns a relay; nil arguments panic.
func NewRelay(src OutboxSource, pub MessagePublisher, logger *zap.Logger, opts RelayOptions) *Relay {
	if src == nil || pub == nil || logger == nil {
		panic("queue: NewRelay with nil source, publisher or logger")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 100
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	return &Relay{src: src, pub: pub, logger: logger.With(zap.String("component", "outbox_relay")), opts: opts, wake: make(chan struct{}, 1)}
}

// Notify wakes the relay after an outbox row was committed. It never
// blocks; notifications while the relay is busy coalesce into one more
// pass.
func (r *Relay) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Flush relays batches until the outbox has no unsent rows (a batch comes
// back short) or an error occurs. Returns the number of rows marked sent.
func (r *Relay) Flush(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := r.src.RelayOutbox(ctx, r.opts.BatchSize, func(ctx context.Context, m OutboxMessage) error {
			if hp, ok := r.pub.(HeaderPublisher); ok && len(m.Headers) > 0 {
				return hp.PublishWithHeaders(ctx, m.Subject, m.MsgID, m.Payload, m.Headers)
			}
			return r.pub.Publish(ctx, m.Subject, m.MsgID, m.Payload)
		})
		total += n
		if err != nil {
			return total, err
		}
		if n < r.opts.BatchSize {
			return total, nil
		}
	}
}

// Run flushes the outbox whenever notified and at every PollInterval until
// ctx is cancelled, then returns nil. Failures (broker or database down) are
// logged and retried at the next wake-up; they never end Run.
func (r *Relay) Run(ctx context.Context) error {
	tick := time.NewTicker(r.opts.PollInterval)
	defer tick.Stop()
	for {
		if _, err := r.Flush(ctx); err != nil && ctx.Err() == nil {
			r.logger.Warn("outbox relay failed, retrying", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
		case <-tick.C:
		}
	}
}
