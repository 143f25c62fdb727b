// Package benchharness is the load generator behind `make bench` (issue 8):
// in one run it starts docintake as separate processes (ingest, processors,
// a dispatcher) on their own PostgreSQL, nats-server and versitygw, and
// measures
//
//  1. ingest: uploads/s and ack latency of 100 KB PDFs from 32 clients, next
//     to raw PutObject of the same bytes to the same versitygw, and the
//     latency at half the maximum rate;
//  2. end to end: documents/s from upload to webhook received for the order
//     corpus with one and two processor processes, and the latency at a
//     fixed offered load of half the one-processor maximum;
//  3. extraction: median ms/document of the engine (text + template + XML)
//     against `pdftotext -layout` alone on the same files;
//  4. memory: every service's peak RSS, and ingest's RSS around a 24 MiB
//     upload.
//
// and last, 2b. scaling: end to end with one, then two processors that
// each have a fixed CPU budget (a cgroup CPU quota), skipped where no
// cgroup can limit CPU (scale.go, cgroup.go).
//
// Report renders the figures as a Markdown table for BENCHMARKS.md.
package benchharness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docintake/docintake/services/systemtest/internal/sysproc"
)

// Options configure a run. Zero values take `make bench`'s defaults.
type Options struct {
	BinDir          string        // ingest, processor, dispatcher binaries; "" builds them into the work dir
	WorkDir         string        // servers' data and logs; "" is a temp dir removed afterwards
	Clients         int           // concurrent uploading clients in the ingest phase (default 32)
	IngestDuration  time.Duration // each ingest measurement (default 10s)
	E2EDuration     time.Duration // each end-to-end maximum measurement (default 20s)
	LatencyDuration time.Duration // the fixed-load end-to-end run (default 15s)
	ExtractRounds   int           // passes over the orders in the extraction phase (default 5)
	ScaleBudget     float64       // cores per processor in the scaling phase (default 0.25; negative: no scaling phase)
	ScaleOnly       bool          // run only the scaling phase (with the servers it needs)
	BigUpload       int64         // the large upload of the memory phase (default 24 MiB)
	Generated       bool          // use generated orders even when ../shared is present
	ProfileDir      string        // when set: services serve pprof, CPU and allocation profiles are written here
	Env             []string      // extra KEY=VALUE settings of every service (experiments; recorded in the report)
	Out             io.Writer     // log lines (default os.Stdout)
	Progress        io.Writer     // the progress line (default: none)
}

func (o *Options) defaults() {
	if o.Clients == 0 {
		o.Clients = 32
	}
	if o.IngestDuration == 0 {
		o.IngestDuration = 10 * time.Second
	}
	if o.E2EDuration == 0 {
		o.E2EDuration = 20 * time.Second
	}
	if o.LatencyDuration == 0 {
		o.LatencyDuration = 15 * time.Second
	}
	if o.ExtractRounds == 0 {
		o.ExtractRounds = 5
	}
	if o.ScaleBudget == 0 {
		o.ScaleBudget = defaultBudget
	}
	if o.BigUpload == 0 {
		o.BigUpload = 24 << 20
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// harness is one run.
type harness struct {
	opts   Options
	repo   string
	sys    *system
	corpus corpus
	rep    *Report
	start  time.Time
	prog   *progress
	// noPeerInstall: the golden phase measures an installed invoice2data
	// only and never runs pip (RunGolden from tests).
	noPeerInstall bool
}

func (h *harness) logf(format string, args ...any) {
	h.prog.clear()
	fmt.Fprintf(h.opts.Out, "[%5.1fs] %s\n", time.Since(h.start).Seconds(), fmt.Sprintf(format, args...))
}

// Run executes one benchmark run and returns its figures. An error means a
// phase could not run (a server that did not start, a failed upload).
func Run(ctx context.Context, opts Options) (*Report, error) {
	h, err := newHarness(opts)
	if err != nil {
		return nil, err
	}
	defer h.prog.stop()
	opts, repo := h.opts, h.repo
	work := opts.WorkDir
	if work == "" {
		if work, err = os.MkdirTemp("", "docintake-bench-*"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	} else if work, err = filepath.Abs(work); err == nil {
		err = os.MkdirAll(work, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	if opts.ProfileDir != "" {
		if err := os.MkdirAll(opts.ProfileDir, 0o755); err != nil {
			return nil, err
		}
	}
	h.sys = &system{work: work, logDir: filepath.Join(work, "logs"), binDir: opts.BinDir, profile: opts.ProfileDir != "", extraEnv: opts.Env}
	if err := os.MkdirAll(h.sys.logDir, 0o755); err != nil {
		return nil, err
	}
	if h.sys.binDir == "" {
		h.sys.binDir = filepath.Join(work, "bin")
		h.logf("building ingest, processor, dispatcher")
		if err := sysproc.BuildServices(ctx, repo, h.sys.binDir); err != nil {
			return nil, err
		}
	}
	for _, s := range []string{"ingest", "processor", "dispatcher"} {
		if !sysproc.IsExec(filepath.Join(h.sys.binDir, s)) {
			return nil, fmt.Errorf("%s/%s missing (make build)", h.sys.binDir, s)
		}
	}
	if h.corpus, err = loadCorpus(repo, work, opts.Generated); err != nil {
		return nil, err
	}
	h.rep.Corpus = fmt.Sprintf("%s (%d files, template %s)", h.corpus.source, len(h.corpus.orders), h.corpus.template)
	h.rep.LoadBefore = loadAvg()
	h.rep.Env = opts.Env

	h.rep.ScaleOnly = opts.ScaleOnly
	if opts.ScaleOnly {
		return h.scaleOnly(ctx)
	}

	// Extraction first, in this process, while nothing else runs.
	if err := h.extraction(ctx); err != nil {
		return nil, fmt.Errorf("extraction: %w", err)
	}
	if err := h.golden(ctx); err != nil {
		return nil, fmt.Errorf("golden: %w", err)
	}

	defer h.sys.stop()
	h.logf("starting PostgreSQL, nats-server, versitygw and ingest (logs in %s)", h.sys.logDir)
	if err := h.sys.start(ctx, repo, h.corpus.templatesDir); err != nil {
		return nil, err
	}
	if err := h.ingest(ctx); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if err := h.endToEnd(ctx); err != nil {
		return nil, fmt.Errorf("end to end: %w", err)
	}
	h.peakRSS()
	h.profiles(ctx, "allocs", "end", 0)
	// After the memory figures: it stops phase 2's processors.
	if err := h.scaling(ctx); err != nil {
		return nil, fmt.Errorf("processors with a CPU budget: %w", err)
	}
	h.rep.LoadAfter = loadAvg()
	h.rep.Elapsed = time.Since(h.start)
	return h.rep, nil
}

// progress keeps one status line up to date while a phase runs.
type progress struct {
	w     io.Writer
	start time.Time
	line  atomic.Pointer[func() string]
	done  chan struct{}
	shown atomic.Bool
}

func newProgress(w io.Writer, start time.Time) *progress {
	p := &progress{w: w, start: start, done: make(chan struct{})}
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				if f := p.line.Load(); f != nil {
					fmt.Fprintf(p.w, "\r\033[K[%5.1fs] %s", time.Since(p.start).Seconds(), (*f)())
					p.shown.Store(true)
				}
			}
		}
	}()
	return p
}

// set shows f's result as the status line until the next set or clear.
func (p *progress) set(f func() string) { p.line.Store(&f) }

// clear removes the status line (before a log line).
func (p *progress) clear() {
	p.line.Store(nil)
	if p.shown.Swap(false) {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func (p *progress) stop() { p.clear(); close(p.done) }

// loadAvg returns /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// machine describes the host for the report.
func machine() string {
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				var kb int64
				fmt.Sscan(f[1], &kb)
				mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = ", " + strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("nproc %d%s, memory %s, %s/%s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}

// waitUntil polls cond every 20ms until it holds or timeout passes.
func waitUntil(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
