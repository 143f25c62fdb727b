// Command ingest serves docintake's client API (uploads, document details)
// and runs the process's outbox relay, which publishes accepted documents'
// jobs to JetStream.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/ingest"
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
	p, err := system.Open(ctx, "ingest", getenv, system.OpenOptions{ApplyClients: true})
	if err != nil {
		return err
	}
	defer p.Close()
	cat, err := catalogue.Open(ctx, p.Store, p.Logger.Named("templates"),
		// The API only resolves names and party ids: nothing to compile.
		catalogue.Options{Dirs: []string{p.Config.TemplatesDir}, NamesOnly: true})
	if err != nil {
		return err
	}
	defer cat.Close()
	pprofCtx, stopPprof := context.WithCancel(ctx)
	waitPprof := p.ServePprof(pprofCtx)
	defer func() { stopPprof(); waitPprof() }()
	// ingest serves /healthz, /readyz and /metrics on its API port. The
	// process's one outbox relay runs until the API has drained, so the
	// last accepted uploads' jobs are published now, not at the next start.
	return p.Relay.Serve(ctx, p.Config.ShutdownTimeout, func(ctx context.Context) error {
		return ingest.Run(ctx, ingest.Deps{Config: p.Config, Store: p.Store, Objects: p.Objects, Templates: cat,
			NATS: p.NATS, JetStream: p.JetStream, Logger: p.Logger, Registry: p.Registry})
	})
}
