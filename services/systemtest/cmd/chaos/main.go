// Command chaos is the fault harness (`make chaos`): docintake as separate
// processes under load while services, nats-server and PostgreSQL are
// killed and restarted; it prints one line per check and exits 1 when any
// check fails. See RELIABILITY.md for the figures of the full run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/docintake/docintake/services/systemtest/internal/chaos"
)

func main() {
	var o chaos.Options
	flag.IntVar(&o.Documents, "n", 2000, "documents to upload")
	flag.IntVar(&o.Clients, "clients", 16, "concurrent uploading clients")
	flag.IntVar(&o.Processors, "processors", 2, "processor processes")
	flag.IntVar(&o.Dispatchers, "dispatchers", 2, "dispatcher processes")
	flag.DurationVar(&o.KillEvery, "kill-every", 0, "mean time between kill -9 of a random service (default 3s)")
	flag.IntVar(&o.NATSRestarts, "nats-restarts", 2, "nats-server crashes during the upload (-1: none)")
	flag.BoolVar(&o.NATSCluster, "nats-cluster", false, "three clustered nats-servers with an R3 stream; NATS crashes hit one node at a time, the stream leader first")
	flag.IntVar(&o.PGRestarts, "pg-restarts", 1, "PostgreSQL crashes during the upload (-1: none)")
	flag.Float64Var(&o.WebhookFail, "webhook-fail", 0.02, "share of webhook calls answered 503 (-1: none)")
	flag.DurationVar(&o.Quiesce, "quiesce", 0, "how long to wait for quiescence (default 10m)")
	flag.StringVar(&o.BinDir, "bin", "", "directory with the ingest, processor and dispatcher binaries (default: build them)")
	flag.StringVar(&o.WorkDir, "work", "", "keep servers' data and logs here (default: temp dir, removed after a green run)")
	flag.StringVar(&o.LogLevel, "log-level", "info", "services' INTAKE_LOG_LEVEL")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := chaos.Run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	rep.Print(os.Stdout)
	if !rep.OK() {
		fmt.Printf("chaos: FAILED (data and logs kept in %s)\n", rep.WorkDir)
		os.Exit(1)
	}
	fmt.Println("chaos: all checks passed")
}
