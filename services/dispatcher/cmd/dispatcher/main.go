// Command dispatcher runs docintake's dispatcher as its own process.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/dispatcher"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dispatcher:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, _ []string, getenv func(string) string, _ io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := cfg.RequireDatabase(); err != nil {
		return err
	}
	logger, err := observability.NewLogger(cfg.LogLevel, "dispatcher")
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	shutdownTracing, err := observability.SetupTracing(ctx, "dispatcher", getenv)
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.WithoutCancel(ctx)) }()
	st, err := system.OpenStore(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Pool().Close()
	tmpls, err := system.LoadTemplates(cfg.TemplatesDir)
	if err != nil {
		return err
	}
	objs, err := system.OpenObjects(ctx, cfg.S3, "")
	if err != nil {
		return err
	}
	nc, js, err := system.ConnectNATS(ctx, cfg.NATSURL, "docintake-dispatcher", system.QueueConfig(cfg), logger)
	if err != nil {
		return err
	}
	defer nc.Close()

	reg := observability.NewRegistry()
	health := observability.NewHealth(
		observability.Check{Name: "postgres", Func: st.Ping},
		observability.Check{Name: "objectstore", Func: objs.Ping},
		observability.Check{Name: "nats", Func: system.NATSPing(nc)},
	)
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	g := new(errgroup.Group)
	g.Go(func() error {
		defer stopWork()
		return dispatcher.Run(workCtx, cfg, dispatcher.Deps{Store: st, Objects: objs, Templates: tmpls, NATS: nc, JetStream: js,
			Logger: logger, Registry: reg})
	})
	g.Go(func() error {
		defer stopWork()
		return observability.Serve(workCtx, cfg.MetricsAddr, health, reg, nil)
	})
	g.Go(func() error {
		// Returns nil at once when profiling is off: only a failure stops
		// the process.
		err := observability.ServePprof(workCtx, cfg.PprofAddr)
		if err != nil {
			stopWork()
		}
		return err
	})
	<-workCtx.Done()
	health.SetDraining()
	err = g.Wait()
	if derr := nc.Drain(); derr != nil {
		logger.Warn("nats drain", zap.Error(derr))
	}
	return err
}
