package queue

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/prometheus/client_golang/prometheus"

	"go.uber.org/zap"
)

// OutboxMessage is one committed outbox row: a job to publish (see
// jobs.Message, the one outbox row type).
type OutboxMessage = jobs.Message

// OutboxSource is the outbox table (implemented by pkg/store).
type OutboxSource interface {
	// RelayOutbox claims up to limit unsent rows and marks them sent (one
	// UPDATE … FOR UPDATE SKIP LOCKED in one transaction, so several
	// relays never publish the same row at the same time), calls publish
	// once with the whole batch in id order, gives back the rows whose
	// publish failed and commits. publish returns nil when every message
	// was published, else one error per message (nil: published). Returns
	// how many rows stay marked and the first publish error.
	RelayOutbox(ctx context.Context, limit int, publish func(ctx context.Context, batch []OutboxMessage) []error) (int, error)
}

// BatchPublisher publishes a batch of jobs with their dedup ids and
// headers; *Publisher is one. It returns nil when every message reached the
// stream, else one error per message (nil: published).
type BatchPublisher interface {
	PublishBatch(ctx context.Context, msgs []OutboxMessage) []error
}

// Notifier wakes a process's outbox relay after a commit that wrote outbox
// rows; *Relay is one. Services get the process's relay as a Notifier: they
// write outbox rows, the process (pkg/system, standalone) runs the relay.
type Notifier interface {
	Notify()
}

// RelayOptions tune a Relay; zero fields take config.Defaults().Tuning's
// values.
type RelayOptions struct {
	// BatchSize is the number of rows claimed per transaction.
	BatchSize int
	// PollInterval is how often the relay looks for rows nobody notified it
	// about (committed by another process, or left by a failed batch).
	PollInterval time.Duration
	// PublishTimeout bounds the wait for one batch's acks.
	PublishTimeout time.Duration
	// Registry, if not nil, receives the relay's metrics: how many relays
	// run in the process (one is the rule) and how many rows they
	// published.
	Registry prometheus.Registerer
}

// Relay moves committed outbox rows to JetStream. A row is published before
// its claim commits; if the relay dies in between, the row is published
// again later with the same Nats-Msg-Id and the stream drops the copy
// (within its duplicates window), so every job reaches the stream once.
//
// A process runs one relay (Serve, around its services) and hands it to the
// services as their Notifier.
type Relay struct {
	src     OutboxSource
	pub     BatchPublisher
	logger  *zap.Logger
	opts    RelayOptions
	wake    chan struct{}
	running prometheus.Gauge
	relayed prometheus.Counter
}

// NewRelay returns a relay; nil arguments panic.
func NewRelay(src OutboxSource, pub BatchPublisher, logger *zap.Logger, opts RelayOptions) *Relay {
	if src == nil || pub == nil || logger == nil {
		panic("queue: NewRelay with nil source, publisher or logger")
	}
	d := config.Defaults().Tuning
	if opts.BatchSize <= 0 {
		opts.BatchSize = d.RelayBatchSize
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = d.RelayPollInterval
	}
	if opts.PublishTimeout <= 0 {
		opts.PublishTimeout = d.RelayPublishTimeout
	}
	r := &Relay{src: src, pub: pub, logger: logger.With(zap.String("component", "outbox_relay")), opts: opts,
		wake: make(chan struct{}, 1),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "docintake_outbox_relays",
			Help: "Outbox relays running in this process (one per process)."}),
		relayed: prometheus.NewCounter(prometheus.CounterOpts{Name: "docintake_outbox_relayed_total",
			Help: "Outbox rows this process's relay published and marked sent."}),
	}
	if opts.Registry != nil {
		r.running = observability.Register(opts.Registry, r.running)
		r.relayed = observability.Register(opts.Registry, r.relayed)
	}
	return r
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
		n, err := r.src.RelayOutbox(ctx, r.opts.BatchSize, func(ctx context.Context, batch []OutboxMessage) []error {
			// The claim's transaction stays open while the acks come in:
			// bound the wait so a silent broker cannot hold the rows.
			pctx, cancel := context.WithTimeout(ctx, r.opts.PublishTimeout)
			defer cancel()
			return r.pub.PublishBatch(pctx, batch)
		})
		total += n
		r.relayed.Add(float64(n))
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
	r.running.Inc()
	defer r.running.Dec()
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

// Serve runs work (a process's services) with the relay beside it, and
// returns work's error. The relay starts before work and stops only after
// work has returned, that is after every service that writes outbox rows
// has drained; then one last Flush (within finalFlush) publishes what they
// committed in their last moments rather than leaving it to the next start.
// work's context is ctx; the relay's is not cancelled with it.
func (r *Relay) Serve(ctx context.Context, finalFlush time.Duration, work func(ctx context.Context) error) error {
	relayCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(relayCtx) // Run only ends with its context
	}()
	if finalFlush <= 0 {
		finalFlush = config.Defaults().ShutdownTimeout
	}
	err := work(ctx)
	stop()
	<-done
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalFlush)
	defer cancel()
	if _, ferr := r.Flush(fctx); ferr != nil {
		r.logger.Warn("final outbox flush", zap.Error(ferr))
	}
	return err
}
