package benchharness_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/services/standalone"
	"github.com/docintake/docintake/services/systemtest/internal/benchharness"
)

// TestScalingShort runs the scaling phase alone (processors with a CPU
// budget, one then two) for a few seconds and checks that it produced its
// figures and removed its cgroups. It asserts nothing about the rates: the
// host is shared. Without a writable cgroup CPU controller it is skipped,
// as the phase is.
func TestScalingShort(t *testing.T) {
	needServers(t)
	how, err := benchharness.CPUBudgetSupport()
	if err != nil {
		t.Skipf("no CPU budget here: %v", err)
	}
	var out strings.Builder
	rep, err := benchharness.Run(t.Context(), benchharness.Options{
		BinDir: os.Getenv("INTAKE_CHAOS_BIN"), E2EDuration: 2 * time.Second, Generated: true, ScaleOnly: true, Out: &out,
	})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatalf("bench harness: %v", err)
	}
	if err := rep.OK(); err != nil {
		t.Fatal(err)
	}
	s := rep.Scaling
	if s.Skipped != "" || s.Budget != 0.25 || s.Quota != s.Period/4 || !strings.HasPrefix(how, strings.Fields(s.Cgroup)[0]) {
		t.Errorf("scaling %+v, want 0.25 core as a quarter of each period (%s)", s, how)
	}
	for i, r := range s.Runs {
		if r.Processors != i+1 || len(r.Budgets) != i+1 {
			t.Fatalf("run %d: %d processors with %d CPU figures", i, r.Processors, len(r.Budgets))
		}
		for _, b := range r.Budgets {
			if b.Cores <= 0 || b.Periods <= 0 {
				t.Errorf("run %d: %s used %.2f cores in %d periods, want the processor's CPU and its group's periods", i, b.Name, b.Cores, b.Periods)
			}
		}
	}
	md := rep.Markdown("make bench")
	for _, want := range []string{"processors limited to 0.25 core each", "2 processors limited to 0.25 core each", "× one**"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// The run's groups are gone: a leftover group would hold a quota.
	groups, _ := filepath.Glob("/sys/fs/cgroup/*/docintake-bench-*")
	more, _ := filepath.Glob("/sys/fs/cgroup/docintake-bench-*")
	for _, g := range append(groups, more...) {
		if strings.HasSuffix(g, "-"+strconv.Itoa(os.Getpid())) {
			t.Errorf("cgroup %s left behind", g)
		}
	}
}

// needServers skips a test that starts the whole system with -short, and
// where no PostgreSQL server binaries are installed (fails on CI instead).
func needServers(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the whole system: skipped with -short")
	}
	if _, err := standalone.PostgresBinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// The phase's verdict is given only when the run measured the processors:
// each at ≥ 85 % of its budget, the pipeline short of all cores.
func TestMarkdownScalingVerdicts(t *testing.T) {
	run := func(n int, perSec, procCores, pipeline float64) benchharness.ScaleRun {
		r := benchharness.ScaleRun{Processors: n, Throughput: benchharness.Throughput{PerSec: perSec}}
		for i := range n {
			name := "processor-" + strconv.Itoa(i+1)
			r.Budgets = append(r.Budgets, benchharness.BudgetUse{Name: name, Cores: procCores, Periods: 100, Throttled: 90})
			r.CPU.Cores = append(r.CPU.Cores, benchharness.NamedCores{Name: name, Cores: procCores})
		}
		r.CPU.Cores = append(r.CPU.Cores, benchharness.NamedCores{Name: "postgres", Cores: pipeline - float64(n)*procCores})
		return r
	}
	for _, c := range []struct {
		name string
		s    benchharness.Scaling
		want string
	}{
		{"met", benchharness.Scaling{Budget: 0.25, Runs: []benchharness.ScaleRun{run(1, 15, 0.25, 0.6), run(2, 29, 0.25, 1.2)}}, "= **1.93× one**; processor-1 0.25 cores = 100 % of its budget, throttled in 90 % of 100 periods"},
		{"missed", benchharness.Scaling{Budget: 0.25, Runs: []benchharness.ScaleRun{run(1, 15, 0.25, 0.6), run(2, 20, 0.25, 1.2)}}, "≥ 1.5× when cores are free | **missed** |"},
		{"below budget", benchharness.Scaling{Budget: 0.25, Runs: []benchharness.ScaleRun{run(1, 15, 0.25, 0.6), run(2, 20, 0.15, 1.2)}}, "**not processor-bound**"},
		{"saturated", benchharness.Scaling{Budget: 0.25, Runs: []benchharness.ScaleRun{run(1, 15, 0.25, 0.6), run(2, 29, 0.25, 1000)}}, "**cores saturated**"},
		{"skipped", benchharness.Scaling{Skipped: "no writable cgroup CPU controller (read-only)"}, "processors with a fixed CPU budget | skipped: no writable cgroup CPU controller (read-only) |"},
	} {
		r := benchharness.Report{Scaling: c.s}
		md := r.Markdown("make bench")
		if !strings.Contains(md, c.want) {
			t.Errorf("%s: markdown lacks %q:\n%s", c.name, c.want, md)
		}
	}
}
