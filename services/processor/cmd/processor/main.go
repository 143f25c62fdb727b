// Command processor runs docintake's processor as its own process.
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
	"github.com/docintake/docintake/services/processor"
)

func main() {
	// Unless GOGC/GOMEMLIMIT say otherwise: a larger GC target with a soft
	// memory limit (see system.DefaultGC).
	system.DefaultGC(os.Getenv)
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "processor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, _ []string, getenv func(string) string, _ io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := system.Open(ctx, "processor", getenv, system.OpenOptions{})
	if err != nil {
		return err
	}
	defer p.Close()
	cat, err := catalogue.Open(ctx, p.Store, p.Logger.Named("templates"), catalogue.Options{Dirs: []string{p.Config.TemplatesDir}})
	if err != nil {
		return err
	}
	defer cat.Close()
	return p.ServeWorker(ctx, func(ctx context.Context) error {
		return processor.Run(ctx, processor.Deps{Config: p.Config, Store: p.Store, Objects: p.Objects, Templates: cat,
			NATS: p.NATS, JetStream: p.JetStream, Logger: p.Logger, Registry: p.Registry})
	})
}
