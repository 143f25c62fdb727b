package ingest

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/system"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Deps are the connected adapters the ingest service runs on; the binary and
// standalone build them (pkg/system) and pass them in.
type Deps struct {
	Store     *store.Store
	Objects   system.ObjectStore
	Templates Templates
	NATS      *nats.Conn
	JetStream jetstream.JetStream
	Logger    *zap.Logger
	Registry  *prometheus.Registry
}

// Serve runs the API on cfg.HTTPAddr and the outbox relay that publishes
// accepted documents' jobs, until ctx is done; then it drains both. bound,
// if not nil, receives the API's address once it listens.
func Serve(ctx context.Context, cfg config.Config, d Deps, bound chan<- string) error {
	qcfg := system.QueueConfig(cfg)
	relay := queue.NewRelay(d.Store, queue.NewPublisher(d.JetStream, qcfg.Stream),
		d.Logger.Named("relay"), queue.RelayOptions{})
	health := observability.NewHealth(
		observability.Check{Name: "postgres", Func: d.Store.Ping},
		observability.Check{Name: "objectstore", Func: d.Objects.Ping},
		observability.Check{Name: "nats", Func: system.NATSPing(d.NATS)},
	)
	srv := New(Config{BasePath: cfg.BasePath, MaxUploadBytes: cfg.MaxUploadBytes, ShutdownTimeout: cfg.ShutdownTimeout,
		SubjectPrefix: qcfg.SubjectPrefix}, d.Store, d.Objects, d.Templates, relay.Notify, d.Logger, d.Registry, health)
	srv.EnableUploadRateLimit(cfg.UploadRateLimit, cfg.UploadRateWindow, d.Store, d.Registry)
	// Clients manage their own templates; PDF samples are read with the
	// default engine, started on the first one.
	pdfOpts := system.PDFOptions(cfg) // samples are read as the processor reads documents
	sampleText := &system.SampleText{Options: &pdfOpts}
	defer func() { _ = sampleText.Close() }()
	srv.EnableTemplates(d.Store, sampleText.Text)
	srv.EnableReprocess(d.Store)
	consumers := []string{qcfg.Processor.Durable, qcfg.Dispatcher.Durable}
	RegisterBacklogMetrics(d.Registry, d.Store, d.JetStream, qcfg.Stream, consumers)
	srv.EnableOps(OpsConfig{Token: cfg.OpsToken, SessionTTL: cfg.OpsSessionTTL, Stream: qcfg.Stream, Consumers: consumers,
		SubjectPrefix: qcfg.SubjectPrefix}, d.Store, d.JetStream)

	// The relay outlives the HTTP server's drain: it stops only after the
	// last accepted upload has been committed, so its job is published now
	// rather than at the next start.
	httpCtx, stopHTTP := context.WithCancel(ctx)
	defer stopHTTP()
	relayCtx, stopRelay := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRelay()
	g := new(errgroup.Group)
	g.Go(func() error {
		defer stopRelay()
		if err := srv.Run(httpCtx, cfg.HTTPAddr, bound); err != nil {
			return fmt.Errorf("ingest api: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		defer stopHTTP()
		if err := relay.Run(relayCtx); err != nil {
			return fmt.Errorf("outbox relay: %w", err)
		}
		return nil
	})
	return g.Wait()
}
