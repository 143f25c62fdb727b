package queue

import (
	"context"
	"sync"
	"time"

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
	// RelayOutbox claims up to limit unsent rows committed at least minAge
	// ago (FOR UPDATE SKIP LOCKED in one transaction, so several relays
	// never publish the same row at the same time), calls publish once with
	// the whole batch in id order, deletes the rows it published and
	// commits. publish returns nil when every message was published, else
	// one error per message (nil: published). Returns how many rows were
	// published and the first publish error.
	RelayOutbox(ctx context.Context, limit int, minAge time.Duration, publish func(ctx context.Context, batch []OutboxMessage) []error) (int, error)
	// DeleteOutbox removes rows that were handed to the relay (Handoff)
	// and published.
	DeleteOutbox(ctx context.Context, ids []int64) error
}

// BatchPublisher publishes a batch of jobs with their dedup ids and
// headers; *Publisher is one. It returns nil when every message reached the
// stream, else one error per message (nil: published).
type BatchPublisher interface {
	PublishBatch(ctx context.Context, msgs []OutboxMessage) []error
}

// RelayOptions tune a Relay; zero fields take the DefaultRelay* values.
type RelayOptions struct {
	// BatchSize is the number of rows claimed per transaction, and the
	// most hand-over rows published or deleted together.
	BatchSize int
	// PollInterval is how often the relay looks for rows it was not handed
	// (committed by another process, or left by a failed publish).
	PollInterval time.Duration
	// ClaimAge is how old a row must be before the poll claims it: younger
	// ones belong to the relay of the process that wrote them.
	ClaimAge time.Duration
	// DeleteDelay is how long published hand-over rows wait to be deleted
	// together.
	DeleteDelay time.Duration
	// PublishTimeout bounds the wait for one batch's acks.
	PublishTimeout time.Duration
	// Registry, if not nil, receives the relay's metrics: how many relays
	// run in the process (one is the rule) and how many rows they
	// published.
	Registry prometheus.Registerer
}

// maxHanded bounds the hand-over rows a relay keeps in memory while it
// cannot publish them (stopped, or the broker is down): beyond it they are
// left to the polls, which find them in the table.
const maxHanded = 10000

// Relay moves committed outbox rows to JetStream.
//
// The process's store hands the relay every outbox row it commits
// (Handoff): the relay publishes it at once and deletes it afterwards,
// batched, with one statement. Rows it was not handed — written by a
// process without a relay, or whose process died before publishing them —
// are claimed from the table by the poll (every PollInterval, rows older
// than ClaimAge) or by Flush. A row is published before it is
// deleted; if the relay dies in between, the row is published again later
// with the same Nats-Msg-Id and the stream drops the copy (within its
// duplicates window), so every job reaches the stream once.
//
// A process runs one relay (Serve, around its services).
type Relay struct {
	src     OutboxSource
	pub     BatchPublisher
	logger  *zap.Logger
	opts    RelayOptions
	wake    chan struct{} // rows were handed over
	running prometheus.Gauge
	relayed prometheus.Counter

	mu     sync.Mutex
	handed []OutboxMessage // to publish
	done   []int64         // published, to delete
}

// NewRelay returns a relay; nil arguments panic.
func NewRelay(src OutboxSource, pub BatchPublisher, logger *zap.Logger, opts RelayOptions) *Relay {
	if src == nil || pub == nil || logger == nil {
		panic("queue: NewRelay with nil source, publisher or logger")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultRelayBatchSize
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultRelayPollInterval
	}
	if opts.ClaimAge <= 0 {
		opts.ClaimAge = DefaultRelayClaimAge
	}
	if opts.DeleteDelay <= 0 {
		opts.DeleteDelay = DefaultRelayDeleteDelay
	}
	if opts.PublishTimeout <= 0 {
		opts.PublishTimeout = DefaultRelayPublishTimeout
	}
	r := &Relay{src: src, pub: pub, logger: logger.With(zap.String("component", "outbox_relay")), opts: opts,
		wake: make(chan struct{}, 1),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "docintake_outbox_relays",
			Help: "Outbox relays running in this process (one per process)."}),
		relayed: prometheus.NewCounter(prometheus.CounterOpts{Name: "docintake_outbox_relayed_total",
			Help: "Outbox rows this process's relay published."}),
	}
	if opts.Registry != nil {
		r.running = observability.Register(opts.Registry, r.running)
		r.relayed = observability.Register(opts.Registry, r.relayed)
	}
	return r
}

// Handoff takes outbox rows (with their ids) whose transaction has just
// committed, to publish at once without claiming them from the table
// (store.HandOutboxTo). It never blocks.
func (r *Relay) Handoff(rows []OutboxMessage) {
	if len(rows) == 0 {
		return
	}
	r.mu.Lock()
	if len(r.handed)+len(rows) <= maxHanded {
		r.handed = append(r.handed, rows...)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Flush publishes the rows handed over, deletes the published ones, then
// claims batches of every unsent row, whatever its age, until a batch comes
// back short or an error occurs. Returns the number of rows published.
func (r *Relay) Flush(ctx context.Context) (int, error) {
	total := r.publishHanded(ctx)
	if err := r.deleteDone(ctx); err != nil {
		return total, err
	}
	n, err := r.claim(ctx, 0)
	return total + n, err
}

// claim publishes batches of unsent rows at least minAge old until a batch
// comes back short or an error occurs.
func (r *Relay) claim(ctx context.Context, minAge time.Duration) (int, error) {
	total := 0
	for {
		n, err := r.src.RelayOutbox(ctx, r.opts.BatchSize, minAge, func(ctx context.Context, batch []OutboxMessage) []error {
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

// publishHanded publishes the rows handed over so far and queues the
// published ones for deletion. A row whose publish fails is dropped here:
// it is still in the table, and a poll claims it after ClaimAge.
func (r *Relay) publishHanded(ctx context.Context) int {
	r.mu.Lock()
	rows := r.handed
	r.handed = nil
	r.mu.Unlock()
	published := 0
	var failed error
	for len(rows) > 0 {
		batch := rows[:min(len(rows), r.opts.BatchSize)]
		rows = rows[len(batch):]
		pctx, cancel := context.WithTimeout(ctx, r.opts.PublishTimeout)
		errs := r.pub.PublishBatch(pctx, batch)
		cancel()
		ids := make([]int64, 0, len(batch))
		for i, m := range batch {
			if i < len(errs) && errs[i] != nil {
				if failed == nil {
					failed = errs[i]
				}
				continue
			}
			ids = append(ids, m.ID)
		}
		r.mu.Lock()
		r.done = append(r.done, ids...)
		r.mu.Unlock()
		published += len(ids)
	}
	r.relayed.Add(float64(published))
	if failed != nil && ctx.Err() == nil {
		r.logger.Warn("outbox rows not published; a poll claims them later", zap.Error(failed))
	}
	return published
}

// deleteDone deletes the published hand-over rows. On failure they stay
// queued for the next try (and should the process die first, a poll
// publishes them again, which the stream's dedup window absorbs).
func (r *Relay) deleteDone(ctx context.Context) error {
	r.mu.Lock()
	ids := r.done
	r.done = nil
	r.mu.Unlock()
	for len(ids) > 0 {
		batch := ids[:min(len(ids), r.opts.BatchSize)]
		if err := r.src.DeleteOutbox(ctx, batch); err != nil {
			r.mu.Lock()
			if len(r.done)+len(ids) <= maxHanded {
				r.done = append(r.done, ids...)
			}
			r.mu.Unlock()
			return err
		}
		ids = ids[len(batch):]
	}
	return nil
}

func (r *Relay) pendingDeletes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.done)
}

// Run relays until ctx is cancelled, then returns nil: rows handed over at
// once, their deletion within DeleteDelay (or as soon as a batch is full),
// rows not handed over at every PollInterval once they are ClaimAge old.
// Failures (broker or database down) are logged and retried at the next
// wake-up; they never end Run.
func (r *Relay) Run(ctx context.Context) error {
	r.running.Inc()
	defer r.running.Dec()
	tick := time.NewTicker(r.opts.PollInterval)
	defer tick.Stop()
	deleteTimer := time.NewTimer(r.opts.DeleteDelay)
	deleteTimer.Stop()
	deleteArmed := false
	warn := func(err error) {
		if err != nil && ctx.Err() == nil {
			r.logger.Warn("outbox relay failed, retrying", zap.Error(err))
		}
	}
	// Rows left by an earlier run of this or another process.
	_, err := r.claim(ctx, 0)
	warn(err)
	for {
		deleteNow := false
		select {
		case <-ctx.Done():
			deleteTimer.Stop()
			return nil // Serve's final Flush publishes and deletes the rest
		case <-r.wake:
			r.publishHanded(ctx)
		case <-tick.C:
			_, err := r.claim(ctx, r.opts.ClaimAge)
			warn(err)
			deleteNow = true // also retries a failed deletion
		case <-deleteTimer.C:
			deleteArmed = false
			deleteNow = true
		}
		n := r.pendingDeletes()
		switch {
		case n == 0:
		case deleteNow || n >= r.opts.BatchSize:
			deleteTimer.Stop()
			deleteArmed = false
			warn(r.deleteDone(ctx))
		case !deleteArmed:
			deleteTimer.Reset(r.opts.DeleteDelay)
			deleteArmed = true
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
		finalFlush = DefaultShutdownGrace
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
