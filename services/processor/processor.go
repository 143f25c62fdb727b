// Package processor is docintake's extraction worker. Every replica runs Run:
//
//   - a share of the durable pull consumer "processor" on <prefix>.process.>
//     (INTAKE_PROCESSOR_CONCURRENCY documents at a time, InProgress
//     heartbeats while a document is worked on), clients taking turns for
//     the workers (queue.Fair);
//   - per job: load the document, read its PDF, extract the text
//     (pkg/pdftext), run its template with mappings from PostgreSQL
//     (pkg/template), write the openTRANS XML and the canonical JSON to
//     results/YYYY/MM/DD/<log_id>.{xml,json}, and commit the new state with
//     the dispatcher's job in one transaction (see handle.go);
//   - a listener for JetStream's MAX_DELIVERIES advisory, which moves
//     documents whose job was delivered too often and started by workers
//     INTAKE_PROCESSOR_MAX_FAILURES times without an outcome (a worker
//     killed each time) to dlq, and deletes the others' jobs (held in fair
//     windows of stopped processors) for the sweeper to re-enqueue;
//   - a sweeper that re-enqueues documents whose job was lost;
//   - a collector of source objects no document refers to (orphans.go);
//   - Prometheus metrics on Deps.Registry.
//
// The outcomes' outbox rows are published by the process's one relay, which
// the store hands them to (system.NewRelay) and the process runs around Run.
//
// Every state change is a compare-and-set, so duplicated, redelivered and
// superseded jobs are acknowledged without effect.
package processor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/config/pdfopts"
	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Deps are what the processor runs on: its configuration, its connected
// adapters and the template catalogue. Every field but Registry, Logger and
// Engine is required.
type Deps struct {
	Config    config.Config
	Store     *store.Store
	Objects   objectstore.Store
	Templates *catalogue.Catalogue
	NATS      *nats.Conn
	JetStream jetstream.JetStream
	Logger    *zap.Logger          // nil: no logs
	Registry  *prometheus.Registry // nil: metrics register nowhere
	// Engine extracts PDF text. Nil: Run starts the engine that
	// INTAKE_PDF_ENGINE selects (one per process, shared by all workers)
	// and closes it when it returns.
	Engine pdftext.Engine
}

// actor is recorded on the events the processor writes.
const actor = "processor"

// Run works until ctx is done, then stops fetching, lets in-flight documents
// finish within INTAKE_SHUTDOWN_TIMEOUT (their jobs are nak'ed for a peer
// otherwise) and returns nil; the process's relay, still running, publishes
// their outcomes. It returns an error when it cannot start or the consumer
// becomes unreadable.
func Run(ctx context.Context, d Deps) error {
	cfg := d.Config
	if d.Store == nil || d.Objects == nil || d.Templates == nil || d.NATS == nil || d.JetStream == nil {
		return errors.New("processor: Deps needs Store, Objects, Templates, NATS and JetStream")
	}
	if !d.Store.HandsOutbox() {
		return errors.New("processor: the store hands its outbox to no relay: the process must run one (system.NewRelay)")
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if len(cfg.ProcessorRetry) == 0 {
		return errors.New("processor: INTAKE_PROCESSOR_RETRY_SCHEDULE is empty")
	}
	qcfg := cfg.Queue()
	engine := d.Engine
	if engine == nil {
		e, err := pdftext.New(pdfopts.Options(cfg))
		if err != nil {
			return fmt.Errorf("processor: pdf engine: %w", err)
		}
		defer func() {
			if err := e.Close(); err != nil {
				d.Logger.Warn("close pdf engine", zap.Error(err))
			}
		}()
		engine = e
	}
	cons, err := d.JetStream.Consumer(ctx, qcfg.Stream, qcfg.Processor.Durable)
	if err != nil {
		return fmt.Errorf("processor: consumer %s on %s: %w", qcfg.Processor.Durable, qcfg.Stream, err)
	}
	info := cons.CachedInfo()
	if need := len(cfg.ProcessorRetry) + 1; info.Config.MaxDeliver > 0 && info.Config.MaxDeliver < need {
		// The sweeper still finishes the schedule (see deferral), just late.
		d.Logger.Warn("consumer max deliver is shorter than the retry schedule; late deferrals wait for the sweeper",
			zap.Int("max_deliver", info.Config.MaxDeliver), zap.Int("schedule", len(cfg.ProcessorRetry)))
	}

	w := &worker{
		st: d.Store, objects: d.Objects, templates: d.Templates, engine: engine,
		log: d.Logger, prefix: qcfg.SubjectPrefix, retry: cfg.ProcessorRetry, maxFailures: cfg.ProcessorMaxFailures,
		maxPDF: cfg.MaxUploadBytes, budget: cfg.TemplateBudget, metrics: newMetrics(d.Registry, d.Store, d.JetStream, qcfg),
		embedded: embedded.Limits{MaxCount: cfg.EmbeddedMaxCount, MaxBytes: cfg.EmbeddedMaxBytes, Timeout: cfg.EmbeddedTimeout},
		putters:  queue.NewWorkers(cfg.ProcessorConcurrency),
	}
	defer w.putters.Stop() // after g.Wait: every handler has returned

	orphans := newOrphanCollector(d.Store, d.Objects, cfg.OrphanGrace, d.Logger.Named("orphans"), d.Registry)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return w.sweepLoop(gctx, cfg.SweepInterval, cfg.StuckAfter, jobQueue{js: d.JetStream, stream: qcfg.Stream,
			processor: qcfg.Processor.Durable, dispatcher: qcfg.Dispatcher.Durable})
	})
	g.Go(func() error { return orphans.run(gctx, cfg.OrphanInterval) })
	g.Go(func() error {
		return w.watchMaxDeliveries(gctx, d.NATS, d.JetStream, qcfg.Stream, qcfg.Processor.Durable)
	})
	g.Go(func() error {
		err := queue.Consume(gctx, cons, max(cfg.ProcessorConcurrency, 1), w.handle, queue.ConsumeOptions{
			Logger:        d.Logger.Named("consumer"),
			ShutdownGrace: cfg.ShutdownTimeout,
			// Failed attempts and infrastructure errors wait this long;
			// deferrals name their own delay (RetryAfter).
			Backoff: func(uint64) time.Duration { return cfg.ProcessorFailureDelay },
			// Clients (the subject's last token) share the workers by the
			// time their documents took (config.Fair), so one client's
			// burst or expensive PDFs do not starve the others; the
			// handler's context names the client for the PDF helpers' share.
			Fair: &queue.Fair{Window: cfg.ProcessorFairWindow, PerTenant: cfg.ProcessorClientConcurrency,
				Policy: cfg.Fair(), Held: func(n int) { w.metrics.held.Set(float64(n)) }},
		})
		if err != nil && gctx.Err() == nil {
			return fmt.Errorf("processor: %w", err)
		}
		return nil
	})
	return g.Wait()
}
