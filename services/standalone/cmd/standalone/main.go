// Command standalone runs the whole docintake system in one process
// (`make run`).
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
	"github.com/docintake/docintake/services/standalone"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "standalone:", err)
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
	logger, err := observability.NewLogger(cfg.LogLevel, "standalone")
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	shutdownTracing, err := observability.SetupTracing(ctx, "standalone", getenv)
	if err != nil {
		return err
	}
	defer func() { _ = shutdownTracing(context.WithoutCancel(ctx)) }()
	return standalone.Run(ctx, cfg, logger, nil)
}
