package system

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Process is what one separate docintake service runs on: its configuration,
// its connected adapters and its one outbox relay. Open builds it, Close
// releases it in reverse order.
type Process struct {
	Config config.Config
	Adapters
	// Relay is the process's one outbox relay: Store hands it every outbox
	// row the services commit (NewRelay).
	// ServeWorker runs it around the worker; ingest's main runs it around
	// the API with Relay.Serve.
	Relay *queue.Relay

	closers []func() // in opening order; Close runs them backwards
}

// Adapters are the connected adapters a service runs on; the workers' Deps
// embed them, so the binaries and standalone hand the same set to each.
type Adapters struct {
	Store     *store.Store
	Objects   ObjectStore
	NATS      *nats.Conn
	JetStream jetstream.JetStream
	Logger    *zap.Logger
	Registry  *prometheus.Registry
}

// Named returns a copy whose logger is named name (one component of a
// process that runs several, such as standalone).
func (a Adapters) Named(name string) Adapters {
	a.Logger = a.Logger.Named(name)
	return a
}

// OpenOptions tune Open.
type OpenOptions struct {
	// ApplyClients upserts INTAKE_CLIENTS_FILE (ingest does; the workers
	// only read clients).
	ApplyClients bool
}

// Open reads the configuration from getenv and connects what a separate
// service needs: JSON logger and tracing named service, the migrated
// PostgreSQL store, the S3 object store and NATS with the stream declared.
// The template catalogue is the services' that read templates (their mains
// open it with catalogue.Open), so a process that reads none links no
// template engine. On error everything opened so far is closed.
func Open(ctx context.Context, service string, getenv func(string) string, opts OpenOptions) (_ *Process, err error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := cfg.RequireDatabase(); err != nil {
		return nil, err
	}
	p := &Process{Config: cfg, Adapters: Adapters{Registry: observability.NewRegistry()}}
	defer func() {
		if err != nil {
			p.Close() // p, not the (nil) result: release what was opened
		}
	}()
	if p.Logger, err = observability.NewLogger(cfg.LogLevel, service); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() { _ = p.Logger.Sync() })
	shutdownTracing, err := observability.SetupTracing(ctx, service, getenv)
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() { _ = shutdownTracing(context.WithoutCancel(ctx)) })
	if p.Store, err = store.Connect(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, p.Store.Pool().Close)
	if opts.ApplyClients && cfg.ClientsFile != "" {
		specs, err := LoadClientsFile(cfg.ClientsFile)
		if err != nil {
			return nil, err
		}
		if err := ApplyClients(ctx, p.Store, specs); err != nil {
			return nil, err
		}
	}
	if p.Objects, err = OpenObjects(ctx, cfg.S3, ""); err != nil {
		return nil, err
	}
	if p.NATS, p.JetStream, err = ConnectNATS(ctx, cfg.NATSURL, "docintake-"+service, cfg.Queue(), p.Logger); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() {
		// Drain flushes pending publishes and acks before closing.
		if err := p.NATS.Drain(); err != nil {
			p.Logger.Warn("nats drain", zap.Error(err))
		}
	})
	p.Relay = NewRelay(p.Adapters, cfg)
	return p, nil
}

// NewRelay returns the outbox relay of a process running on a: one per
// process, whatever services it runs, publishing the store's outbox to the
// configured stream; its metrics go to a.Registry. a.Store hands it every
// outbox row committed through it from now on, so the services never wake
// or call the relay themselves.
func NewRelay(a Adapters, cfg config.Config) *queue.Relay {
	var opts queue.RelayOptions
	if a.Registry != nil { // a nil *Registry in the interface would not be nil
		opts.Registry = a.Registry
	}
	r := queue.NewRelay(a.Store, queue.NewPublisher(a.JetStream, cfg.Queue().Stream), a.Logger.Named("relay"), opts)
	a.Store.HandOutboxTo(r.Handoff)
	return r
}

// Close drains NATS, closes the pool, flushes traces and the log.
func (p *Process) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}

// Health returns the readiness checks of the process's dependencies.
func (p *Process) Health() *observability.Health {
	return observability.NewHealth(
		observability.Check{Name: "postgres", Func: p.Store.Ping},
		observability.Check{Name: "objectstore", Func: p.Objects.Ping},
		observability.Check{Name: "nats", Func: queue.Ping(p.NATS)},
	)
}

// ServePprof serves profiles on INTAKE_PPROF_ADDR (if set) until ctx is
// done. Profiles are a debugging aid: a failure is logged and does not stop
// the service.
func (p *Process) ServePprof(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := observability.ServePprof(ctx, p.Config.PprofAddr); err != nil {
			p.Logger.Error("pprof server", zap.Error(err))
		}
	}()
	return func() { <-done }
}

// ServeWorker runs work together with the process's outbox relay and the
// health/metrics server on INTAKE_METRICS_ADDR until ctx is done or either
// fails; readiness turns 503 as soon as the process starts draining. The
// relay stops after work has drained, with a last flush of what it
// committed.
func (p *Process) ServeWorker(ctx context.Context, work func(ctx context.Context) error) error {
	health := p.Health()
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	waitPprof := p.ServePprof(workCtx)
	defer waitPprof()
	g := new(errgroup.Group)
	g.Go(func() error {
		defer stopWork()
		return p.Relay.Serve(workCtx, p.Config.ShutdownTimeout, work)
	})
	g.Go(func() error {
		defer stopWork()
		return observability.Serve(workCtx, p.Config.MetricsAddr, health, p.Registry, nil)
	})
	<-workCtx.Done()
	health.SetDraining()
	return g.Wait()
}
