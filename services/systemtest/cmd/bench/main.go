// Command bench is `make bench`: the whole pipeline's throughput, latency,
// extraction time and memory in one run (see internal/benchharness). It
// prints the table and writes it into BENCHMARKS.md between its markers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/docintake/docintake/services/systemtest/internal/benchharness"
	"github.com/docintake/docintake/services/systemtest/internal/sysproc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var o benchharness.Options
	var md, command string
	flag.StringVar(&o.BinDir, "bin", "", "directory with the ingest, processor and dispatcher binaries (default: build them)")
	flag.StringVar(&o.WorkDir, "work", "", "keep servers' data and logs here (default: temp dir, removed)")
	flag.IntVar(&o.Clients, "clients", 32, "concurrent uploading clients of the ingest phase")
	flag.DurationVar(&o.IngestDuration, "ingest-time", 10*time.Second, "length of each ingest measurement")
	flag.DurationVar(&o.E2EDuration, "e2e-time", 20*time.Second, "length of each end-to-end maximum run")
	flag.DurationVar(&o.LatencyDuration, "latency-time", 15*time.Second, "length of the fixed-load end-to-end run")
	flag.Float64Var(&o.ScaleBudget, "scale-budget", 0, "CPU budget of each processor in the scaling phase, in cores (default 0.25; negative: skip the phase)")
	flag.BoolVar(&o.ScaleOnly, "scale-only", false, "run only the scaling phase (processors with a CPU budget); BENCHMARKS.md is left alone")
	flag.IntVar(&o.ExtractRounds, "extract-rounds", 5, "passes over the orders in the extraction phase")
	flag.BoolVar(&o.Generated, "generated", false, "use generated orders even when ../shared is present")
	flag.StringVar(&o.ProfileDir, "profile", "", "serve pprof from the services and write CPU and allocation profiles here")
	flag.StringVar(&md, "md", "", "Markdown file to write the table into (default: BENCHMARKS.md at the repository root; - for none)")
	flag.StringVar(&command, "command", "", "the command recorded in the report (default: this command line)")
	flag.Func("env", "KEY=VALUE setting for every service, e.g. -env INTAKE_PROCESSOR_CONCURRENCY=4 (repeatable)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		o.Env = append(o.Env, v)
		return nil
	})
	flag.Parse()
	if o.ScaleOnly && md == "" {
		md = "-" // a partial table must not replace the whole run's
	}
	if md == "" {
		repo, err := sysproc.RepoRoot()
		if err != nil {
			return err
		}
		md = filepath.Join(repo, "BENCHMARKS.md")
	}
	if command == "" {
		command = strings.TrimSpace("cd services/systemtest && go run ./cmd/bench " + strings.Join(os.Args[1:], " "))
	}
	o.Out, o.Progress = os.Stdout, os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := benchharness.Run(ctx, o)
	if err != nil {
		return err
	}
	table := rep.Markdown(command)
	fmt.Println()
	fmt.Print(table)
	if md != "-" {
		if err := benchharness.WriteSection(md, table); err != nil {
			return err
		}
		fmt.Println("\nwritten to", md)
	}
	return rep.OK()
}
