// Command dispatcher runs docintake's dispatcher as its own process.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/dispatcher"
)

func main() {
	// Unless GOGC/GOMEMLIMIT say otherwise: a larger GC target with a soft
	// memory limit (see system.DefaultGC).
	system.DefaultGC(os.Getenv)
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dispatcher:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, _ []string, getenv func(string) string, _ io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := system.Open(ctx, "dispatcher", getenv, system.OpenOptions{})
	if err != nil {
		return err
	}
	defer p.Close()
	return p.ServeWorker(ctx, func(ctx context.Context) error {
		return dispatcher.Run(ctx, dispatcher.Deps{Config: p.Config, Store: p.Store, Objects: p.Objects,
			JetStream: p.JetStream, Logger: p.Logger, Registry: p.Registry})
	})
}
