// Command ingest serves docintake's client API (uploads, document details)
// and relays accepted documents' jobs to JetStream.
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
	"github.com/docintake/docintake/services/ingest"
	"go.uber.org/zap"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ingest:", err)
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
	logger, err := observability.NewLogger(cfg.LogLevel, "ingest")
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	shutdownTracing, err := observability.SetupTracing(ctx, "ingest", getenv)
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.WithoutCancel(ctx)) }()

	st, err := system.OpenStore(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Pool().Close()
	if cfg.ClientsFile != "" {
		specs, err := system.LoadClientsFile(cfg.ClientsFile)
		if err != nil {
			return err
		}
		if err := system.ApplyClients(ctx, st, specs); err != nil {
			return err
		}
	}
	tmpls, err := system.LoadTemplates(cfg.TemplatesDir)
	if err != nil {
		return err
	}
	objs, err := system.OpenObjects(ctx, cfg.S3, "")
	if err != nil {
		return err
	}
	nc, js, err := system.ConnectNATS(ctx, cfg.NATSURL, "docintake-ingest", system.QueueConfig(cfg), logger)
	if err != nil {
		return err
	}
	defer nc.Close()

	// Profiles (INTAKE_PPROF_ADDR) are a debugging aid: a port conflict is
	// logged, it does not stop the API.
	pprofCtx, stopPprof := context.WithCancel(ctx)
	pprofDone := make(chan struct{})
	go func() {
		defer close(pprofDone)
		if err := observability.ServePprof(pprofCtx, cfg.PprofAddr); err != nil {
			logger.Error("pprof server", zap.Error(err))
		}
	}()
	defer func() { stopPprof(); <-pprofDone }()

	err = ingest.Serve(ctx, cfg, ingest.Deps{Store: st, Objects: objs, Templates: tmpls, NATS: nc, JetStream: js,
		Logger: logger, Registry: observability.NewRegistry()}, nil)
	if derr := nc.Drain(); derr != nil {
		logger.Warn("nats drain", zap.Error(derr))
	}
	return err
}
