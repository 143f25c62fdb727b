package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/config/pdfopts"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Deps are what the ingest service runs on: its configuration and connected
// adapters; the binary and standalone build them and pass them in. Every
// field but Bound is required.
type Deps struct {
	Config    config.Config
	Store     *store.Store
	Objects   objectstore.Store
	Templates Templates
	NATS      *nats.Conn
	JetStream jetstream.JetStream
	Logger    *zap.Logger
	Registry  *prometheus.Registry
	// Bound, if not nil, receives the API's address once it listens.
	Bound chan<- string
}

// Run serves the API on Config.HTTPAddr until ctx is done, then drains it.
func Run(ctx context.Context, d Deps) error {
	cfg := d.Config
	if d.Store == nil || d.Objects == nil || d.Templates == nil || d.NATS == nil || d.JetStream == nil ||
		d.Logger == nil || d.Registry == nil {
		return errors.New("ingest: Deps needs Store, Objects, Templates, NATS, JetStream, Logger and Registry")
	}
	if !d.Store.HandsOutbox() {
		// The process runs the relay (cmd/ingest, standalone: system.NewRelay)
		// and keeps it running until Serve has drained.
		return errors.New("ingest: the store hands its outbox to no relay: the process must run one (system.NewRelay)")
	}
	qcfg := cfg.Queue()
	health := observability.NewHealth(
		observability.Check{Name: "postgres", Func: d.Store.Ping},
		observability.Check{Name: "objectstore", Func: d.Objects.Ping},
		observability.Check{Name: "nats", Func: queue.Ping(d.NATS)},
	)
	srv := New(Config{BasePath: cfg.BasePath, MaxUploadBytes: cfg.MaxUploadBytes, ShutdownTimeout: cfg.ShutdownTimeout,
		SubjectPrefix: qcfg.SubjectPrefix, TemplateLimits: cfg.TemplateLimits, TemplateBudget: cfg.TemplateBudget},
		d.Store, d.Objects, d.Templates, d.Logger, d.Registry, health)
	srv.EnableUploadRateLimit(cfg.UploadRateLimit, cfg.UploadRateWindow, d.Store, d.Registry)
	srv.EnableTemplateChangeRateLimit(cfg.TemplateLimits.ChangeRateLimit, cfg.TemplateLimits.ChangeRateWindow, d.Store, d.Registry)
	groups := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "docintake_ingest_insert_group_uploads",
		Help:    "Uploads written by one INSERT of the store's group commit (concurrent uploads share one statement and commit).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
	})
	d.Registry.MustRegister(groups)
	d.Store.ObserveCreateGroups(func(n int) { groups.Observe(float64(n)) })
	defer d.Store.ObserveCreateGroups(nil)
	// Clients manage their own templates; PDF samples are read with the
	// default engine, started on the first one.
	pdfOpts := pdfopts.Options(cfg) // samples are read as the processor reads documents
	sampleText := &catalogue.SampleText{Options: &pdfOpts}
	defer func() { _ = sampleText.Close() }()
	srv.EnableTemplates(d.Store, sampleText.Text)
	srv.EnableReprocess(d.Store)
	srv.EnablePriceLists(d.Store)
	consumers := []string{qcfg.Processor.Durable, qcfg.Dispatcher.Durable}
	RegisterBacklogMetrics(d.Registry, d.Store, d.JetStream, qcfg.Stream, consumers)
	srv.EnableOps(OpsConfig{Token: cfg.OpsToken, Enabled: cfg.OpsConsole, TrustedUserHeader: cfg.OpsTrustedUserHeader,
		TrustedProxies: cfg.OpsTrustedProxies, SessionTTL: cfg.OpsSessionTTL, Stream: qcfg.Stream, Consumers: consumers,
		SubjectPrefix: qcfg.SubjectPrefix, Review: reviewConfig(d, qcfg.SubjectPrefix, sampleText.Text)}, d.Store, d.JetStream)

	if err := srv.Run(ctx, cfg.HTTPAddr, d.Bound); err != nil {
		return fmt.Errorf("ingest api: %w", err)
	}
	return nil
}

// pinnedTemplates is the catalogue's Pinned, which the review pages ask
// besides Resolve (catalogue.Catalogue has both).
type pinnedTemplates interface {
	Pinned(ctx context.Context, documentID string) (*catalogue.Version, error)
}

// reviewConfig turns the console's review pages on when the templates can
// say which version a document was processed with (nil otherwise).
func reviewConfig(d Deps, prefix string, text catalogue.TextFunc) *ReviewConfig {
	pt, ok := d.Templates.(pinnedTemplates)
	if !ok {
		return nil
	}
	return &ReviewConfig{Review: lifecycle.Review{Store: d.Store, Objects: d.Objects, Pinned: pt.Pinned, Prefix: prefix,
		SampleText: text}}
}
