package benchharness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/docintake/docintake/services/systemtest/internal/sysproc"
)

// defaultBudget is the CPU budget of each processor in the scaling phase,
// in cores. A processor costs ≈ 9 ms of CPU per document and the rest of
// the pipeline (PostgreSQL, versitygw, nats-server, ingest, dispatcher,
// the harness) ≈ 15 ms (BENCHMARKS.md), so two processors at 0.25 core
// drive ≈ 55 documents/s and about 1.3 of the 2 cores: the processors
// are the bottleneck and a second one still finds cores free.
const defaultBudget = 0.25

// Scaling is phase 2b: end to end with processors that each have a fixed
// CPU budget (a cgroup CPU quota, as a Kubernetes CPU limit sets), first
// one, then two.
type Scaling struct {
	Budget  float64       // cores per processor
	Quota   time.Duration // CFS quota per period
	Period  time.Duration
	Cgroup  string // how ("cgroup v1 at /sys/fs/cgroup/cpu")
	Skipped string // why the phase did not run
	Runs    []ScaleRun
}

// ScaleRun is one maximum run with n limited processors.
type ScaleRun struct {
	Processors int
	Throughput
	Budgets []BudgetUse
}

// BudgetUse is one limited processor's CPU over a run.
type BudgetUse struct {
	Name      string
	Cores     float64       // CPU used (the process and its children), from /proc, over the measured window
	Periods   int64         // CFS periods in which the group ran, whole run
	Throttled int64         // of those, periods that used up the quota
	Waited    time.Duration // time the group was held back by the quota
}

// ratio is the 2-processor rate over the 1-processor rate, 0 before both ran.
func (s Scaling) ratio() float64 {
	if len(s.Runs) < 2 || s.Runs[0].PerSec <= 0 {
		return 0
	}
	return s.Runs[1].PerSec / s.Runs[0].PerSec
}

// atBudget reports whether every limited processor used at least 85 % of
// its budget: only then is the rate the processors' rate.
func (r ScaleRun) atBudget(budget float64) bool {
	if len(r.Budgets) == 0 {
		return false
	}
	for _, b := range r.Budgets {
		if b.Cores < 0.85*budget {
			return false
		}
	}
	return true
}

// headroom reports whether the pipeline as a whole (processors, servers,
// ingest, dispatcher, harness) left at least 15 % of the cores unused, so
// the shared backends were not short of CPU. Other users' load does not
// count: the pipeline's processes have the highest CPU weight during the
// phase, so the neighbours get only what the pipeline leaves.
func (r ScaleRun) headroom() bool { return r.CPU.ours() <= 0.85*float64(numCPU()) }

func (u CPUUse) ours() float64 {
	var sum float64
	for _, c := range u.Cores {
		sum += c.Cores
	}
	return sum
}

// scaling runs phase 2b. The processors of phase 2 are stopped first (they
// have no budget and would take documents); the limited ones are stopped
// and their groups removed before it returns, also on error or interrupt.
// Where no cgroup can limit CPU the phase is skipped with the reason.
func (h *harness) scaling(ctx context.Context) (err error) {
	sc := &h.rep.Scaling
	if h.opts.ScaleBudget < 0 {
		sc.Skipped = "disabled"
		return nil
	}
	cg, err := newCPUGroups()
	if err != nil {
		sc.Skipped = fmt.Sprintf("no writable cgroup CPU controller (%v)", err)
		h.logf("processors with a CPU budget: skipped: %s", sc.Skipped)
		return nil
	}
	var limited []*service
	defer func() {
		for _, s := range limited {
			s.p.Signal(syscall.SIGTERM, 15*time.Second)
		}
		if rerr := cg.remove(); rerr != nil {
			h.logf("processors with a CPU budget: %v", rerr)
			if err == nil {
				err = rerr
			}
		}
	}()
	sc.Budget, sc.Period, sc.Cgroup = h.opts.ScaleBudget, cg.period, cg.describe()
	favoured, err := cg.addFavoured("system")
	if err != nil {
		return err
	}
	if err := favoured.adopt(os.Getpid()); err != nil {
		return err
	}
	if h.sys.dispatcher == nil {
		if err := h.sys.startDispatcher(ctx); err != nil {
			return err
		}
	}
	for _, p := range h.sys.processors {
		p.p.Signal(syscall.SIGTERM, 15*time.Second)
	}
	u := newUploader(h.sys.apiURL, h.sys.tokens, 64)
	var groups []*cpuGroup
	for n := 1; n <= 2; n++ {
		name := fmt.Sprintf("processor-%.2fcore-%d", sc.Budget, n)
		g, err := cg.add(name, sc.Budget)
		if err != nil {
			return err
		}
		sc.Quota = g.quota
		groups = append(groups, g)
		h.logf("starting %s in %s (CFS quota %s per %s)", name, g.dir, g.quota, cg.period)
		svc, err := h.sys.startProcessorIn(ctx, name, g.procsFile())
		if err != nil {
			return err
		}
		limited = append(limited, svc)
		label := fmt.Sprintf("%d processor(s) at %.2f core", n, sc.Budget)
		// Warm-up: the new processor's connections and extraction helpers.
		if _, err := h.saturate(ctx, u, min(3*time.Second, h.opts.E2EDuration/2), "warm-up, "+label); err != nil {
			return err
		}
		before := make([]throttling, len(groups))
		for i, g := range groups {
			if before[i], err = g.throttling(); err != nil {
				return err
			}
		}
		t, err := h.saturate(ctx, u, h.opts.E2EDuration, label)
		if err != nil {
			return err
		}
		run := ScaleRun{Processors: n, Throughput: t}
		for i, g := range groups {
			after, err := g.throttling()
			if err != nil {
				return err
			}
			d := after.sub(before[i])
			use := BudgetUse{Name: g.name, Periods: d.periods, Throttled: d.throttled, Waited: d.waited}
			for _, c := range t.CPU.Cores {
				if c.Name == g.name {
					use.Cores = c.Cores
				}
			}
			run.Budgets = append(run.Budgets, use)
		}
		sc.Runs = append(sc.Runs, run)
		h.logf("%s: %s", label, run.budgetLine(sc.Budget))
	}
	if r := sc.ratio(); r > 0 {
		h.logf("processors at %.2f core each: 1 → %.1f documents/s, 2 → %.1f documents/s = %.2f×", sc.Budget,
			sc.Runs[0].PerSec, sc.Runs[1].PerSec, r)
	}
	return nil
}

// budgetLine says how much of its budget each processor used and how
// often the quota held it back.
func (r ScaleRun) budgetLine(budget float64) string {
	var parts []string
	for _, b := range r.Budgets {
		thr := "no periods"
		if b.Periods > 0 {
			thr = fmt.Sprintf("throttled in %.0f %% of %d periods", 100*float64(b.Throttled)/float64(b.Periods), b.Periods)
		}
		parts = append(parts, fmt.Sprintf("%s %.2f cores = %.0f %% of its budget, %s", b.Name, b.Cores, 100*b.Cores/budget, thr))
	}
	return fmt.Sprintf("%s; the pipeline used %.2f of %d cores (machine busy %.2f with other users)", strings.Join(parts, "; "),
		r.CPU.ours(), numCPU(), r.CPU.Machine)
}

// startProcessorIn starts a processor that joins the cgroup whose
// cgroup.procs is procs before it executes: a shell writes its own pid
// there and then becomes the processor, so the processor and every child
// it ever starts are inside the group from their first instruction.
func (s *system) startProcessorIn(ctx context.Context, name, procs string) (*service, error) {
	addr, err := sysproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	svc, err := s.newServiceCmd(name, "/bin/sh", []string{"-c", `echo $$ > "$0" && exec "$1"`, procs, filepath.Join(s.binDir, "processor")},
		addr, "INTAKE_METRICS_ADDR="+addr)
	if err != nil {
		return nil, err
	}
	return svc, s.startService(ctx, svc)
}

// markdownRows renders phase 2b's rows of the main table.
func (s Scaling) markdownRows(w func(string, ...any)) {
	if s.Skipped != "" {
		w("| 2 | end to end, processors with a fixed CPU budget | skipped: %s | | |\n", strings.ReplaceAll(s.Skipped, "|", "/"))
		return
	}
	if len(s.Runs) < 2 {
		return
	}
	one, two := s.Runs[0], s.Runs[1]
	w("| 2 | end to end, processors limited to %.2f core each (%s, CFS quota %s per %s), 1 processor | %.1f documents/s; %s | processor at its budget, cores free | %s |\n",
		s.Budget, s.Cgroup, s.Quota, s.Period, one.PerSec, one.budgetLine(s.Budget), boundVerdict(one, s.Budget))
	v := boundVerdict(two, s.Budget)
	if one.atBudget(s.Budget) && two.atBudget(s.Budget) && two.headroom() {
		v = verdict(s.ratio() >= 1.5)
	}
	w("| 2 | end to end, 2 processors limited to %.2f core each | %.1f documents/s = **%.2f× one**; %s | ≥ 1.5× when cores are free | %s |\n",
		s.Budget, two.PerSec, s.ratio(), two.budgetLine(s.Budget), v)
}

// boundVerdict says whether a run measured the limited processors: each at
// its budget while the host had cores to spare.
func boundVerdict(r ScaleRun, budget float64) string {
	switch {
	case !r.atBudget(budget):
		return "**not processor-bound**: a processor used < 85 % of its budget"
	case !r.headroom():
		return "**cores saturated**: the ratio measures the machine"
	}
	return "processor-bound"
}

// markdownCPU renders phase 2b's lines of the CPU table.
func (s Scaling) markdownCPU(w func(string, ...any)) {
	for _, r := range s.Runs {
		w("| %d processor(s) at %.2f core | %s%s |\n", r.Processors, s.Budget, r.CPU, perItem(r.CPU, r.PerSec, "document"))
	}
}

// scaleOnly is Run with the scaling phase alone (-scale-only, and the
// test of the phase): the servers, ingest and a dispatcher, then phase 2b.
func (h *harness) scaleOnly(ctx context.Context) (*Report, error) {
	defer h.sys.stop()
	h.logf("starting PostgreSQL, nats-server, versitygw and ingest (logs in %s)", h.sys.logDir)
	if err := h.sys.start(ctx, h.repo, h.corpus.templatesDir); err != nil {
		return nil, err
	}
	if err := h.scaling(ctx); err != nil {
		return nil, fmt.Errorf("processors with a CPU budget: %w", err)
	}
	h.rep.LoadAfter = loadAvg()
	h.rep.Elapsed = time.Since(h.start)
	return h.rep, nil
}

// ok reports whether the phase produced figures (or was skipped).
func (s Scaling) ok() error {
	if s.Skipped != "" {
		return nil
	}
	if len(s.Runs) != 2 || s.Runs[0].PerSec <= 0 || s.Runs[1].PerSec <= 0 {
		return fmt.Errorf("processors with a CPU budget: %d runs, want 2 with a rate", len(s.Runs))
	}
	for _, r := range s.Runs {
		if len(r.Budgets) != r.Processors {
			return fmt.Errorf("processors with a CPU budget: %d processors, %d CPU figures", r.Processors, len(r.Budgets))
		}
	}
	return nil
}
