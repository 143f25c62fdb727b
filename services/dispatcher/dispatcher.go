// Package dispatcher is docintake's webhook worker: it consumes
// intake.deliver.> jobs and delivers each outcome to the client's webhook.
//
// # How a delivery flows
//
// The processor commits an outbox row (jobs.Deliver) with every outcome. The
// relay of the process that committed it publishes it (every process runs
// one: Run does not, the process does — pkg/system, standalone); a worker of the durable consumer "dispatcher" picks it
// up, records the delivery in PostgreSQL (its id is the webhook-id) and makes
// one HTTP attempt. On 2xx the document moves processed_* → sent_* →
// finished_* (an event per step) in the statement that also stores the
// attempt. On failure the attempt is stored, the next one is scheduled in
// PostgreSQL (next_attempt_at, from INTAKE_WEBHOOK_RETRY_SCHEDULE with jitter, or the
// client's Retry-After on 429/503) and the message is acked; a scheduler
// loop republishes due deliveries. Retries therefore hold no JetStream
// resources: a client that is down for a day does not fill the consumer's
// MaxAckPending, and cannot slow other clients down.
//
// # Concurrency
//
// INTAKE_DISPATCHER_CONCURRENCY workers per process, of which at most
// INTAKE_WEBHOOK_CLIENT_CONCURRENCY work for one client at a time. A job for
// a client that has no free slot is not waited for: the worker naks it with a
// short delay and takes the next message, so a slow client never occupies
// the pool. The limit is per process.
//
// # Crashes
//
// An attempt leases its delivery for the webhook timeout plus a margin. A
// dispatcher killed after the client's 2xx but before the state update
// leaves the delivery pending; when the lease ends the scheduler republishes
// it and the client receives it again with the same webhook-id
// (at-least-once).
package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/webhook"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Deps are what the dispatcher runs on: its configuration and connected
// adapters. Config, Store, Objects, JetStream and Logger are required.
type Deps struct {
	Config    config.Config
	Store     *store.Store
	Objects   objectstore.Store
	JetStream jetstream.JetStream
	Logger    *zap.Logger
	Registry  *prometheus.Registry // nil: metrics register nowhere
	// Webhook is the HTTP client; nil builds one from the configuration.
	Webhook *webhook.Client
	// Tuning overrides internal intervals; the zero value is production.
	Tuning Tuning
}

// Tuning holds the dispatcher's internal timings. Zero fields take their
// defaults from config.Defaults().Tuning; tests shorten them.
type Tuning struct {
	// PollInterval is how often the scheduler looks for due retries
	// (config's Tuning.DispatcherPollInterval).
	PollInterval time.Duration
	// LeaseMargin is added to INTAKE_WEBHOOK_TIMEOUT for an attempt's lease
	// (config's Tuning.WebhookLeaseMargin).
	LeaseMargin time.Duration
	// Backstop is when a published job that never arrived is republished
	// (config's Tuning.DeliveryBackstop).
	Backstop time.Duration
	// BusyDelay is the nak delay of a job whose client has no free slot,
	// ±50% jitter (config's Tuning.DispatcherBusyDelay).
	BusyDelay time.Duration
	// MetricsInterval is how often backlog gauges are read from PostgreSQL
	// (config's Tuning.DispatcherMetricsInterval).
	MetricsInterval time.Duration
}

func (t Tuning) withDefaults() Tuning {
	d := config.Defaults().Tuning
	if t.PollInterval <= 0 {
		t.PollInterval = d.DispatcherPollInterval
	}
	if t.LeaseMargin <= 0 {
		t.LeaseMargin = d.WebhookLeaseMargin
	}
	if t.Backstop <= 0 {
		t.Backstop = d.DeliveryBackstop
	}
	if t.BusyDelay <= 0 {
		t.BusyDelay = d.DispatcherBusyDelay
	}
	if t.MetricsInterval <= 0 {
		t.MetricsInterval = d.DispatcherMetricsInterval
	}
	return t
}

// Run works until ctx is done, then drains: the consumer (at most
// INTAKE_DISPATCHER_CONCURRENCY attempts at once), the retry scheduler and
// the backlog metrics. The dispatcher writes no outbox rows; its process
// still runs one relay, for the rows other processes leave behind. It returns an error when the consumer
// cannot be read.
func Run(ctx context.Context, d Deps) error {
	if d.Store == nil || d.Objects == nil || d.JetStream == nil || d.Logger == nil {
		return errors.New("dispatcher: Deps needs Store, Objects, JetStream and Logger")
	}
	cfg := d.Config
	qcfg := cfg.Queue()
	hook := d.Webhook
	if hook == nil {
		hook = webhook.New(webhook.Options{Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate})
		defer hook.Close()
	}
	dp := &dispatcher{
		cfg:     cfg,
		prefix:  qcfg.SubjectPrefix,
		store:   d.Store,
		objects: d.Objects,
		hook:    hook,
		pub:     queue.NewPublisher(d.JetStream, qcfg.Stream),
		logger:  d.Logger,
		tuning:  d.Tuning.withDefaults(),
		// The lease outlives the longest call (a killed replica's slots
		// come back after it): the webhook timeout plus the database work
		// around the attempt.
		limits:  newLimiter(max(cfg.WebhookConcurrency, 1), d.Store, 2*cfg.WebhookTimeout+30*time.Second),
		metrics: newMetrics(d.Registry),
	}
	cons, err := d.JetStream.Consumer(ctx, qcfg.Stream, qcfg.Dispatcher.Durable)
	if err != nil {
		return fmt.Errorf("dispatcher consumer %s on %s: %w", qcfg.Dispatcher.Durable, qcfg.Stream, err)
	}
	concurrency := cfg.DispatcherConcurrency
	if concurrency <= 0 {
		concurrency = config.Defaults().DispatcherConcurrency
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return queue.Consume(gctx, cons, concurrency, dp.handle, queue.ConsumeOptions{
			Logger: d.Logger.Named("consumer"), ShutdownGrace: cfg.ShutdownTimeout})
	})
	g.Go(func() error { dp.schedule(gctx); return nil })
	g.Go(func() error { dp.refreshMetrics(gctx); return nil })
	return g.Wait()
}
