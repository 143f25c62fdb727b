package benchharness_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/docintake/docintake/services/systemtest/internal/benchharness"
)

// TestGoldenPhase runs phase 3b of `make bench` alone (invoice2data's 16
// golden documents, templates loaded once) and checks that every row that
// ran reproduced invoice2data's expected JSON for every document: docintake
// with each engine and, when an installation is found (see
// BENCHMARKS.md: INTAKE_BENCH_PYTHON, INTAKE_BENCH_INVOICE2DATA_PYTHONPATH or
// an existing venv; the test never runs pip), invoice2data itself. INTAKE_BENCH_GOLDEN_ROUNDS sets the rounds
// (default 1) when the figures it logs are wanted.
func TestGoldenPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("golden phase: skipped with -short")
	}
	rounds := 1
	if v := os.Getenv("INTAKE_BENCH_GOLDEN_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("INTAKE_BENCH_GOLDEN_ROUNDS=%q: want a positive number", v)
		}
		rounds = n
	}
	var out bytes.Buffer
	// No pip install from a test: the peer row needs an installation.
	g, err := benchharness.RunGolden(t.Context(), benchharness.Options{BinDir: os.Getenv("INTAKE_CHAOS_BIN"), ExtractRounds: rounds, Out: &out}, false)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if g.Documents == 0 {
		t.Skip("../shared/corpus/invoice2data not present")
	}
	if g.Documents != 16 {
		t.Errorf("%d golden documents, want invoice2data's 16", g.Documents)
	}
	if len(g.Rows) == 0 {
		t.Fatal("no extractor ran")
	}
	for _, r := range g.Rows {
		if r.Equal != g.Documents {
			t.Errorf("%s: %d/%d outputs equal to the expected JSON", r.Name, r.Equal, g.Documents)
		}
		if r.CPU <= 0 || r.Wall <= 0 {
			t.Errorf("%s: no time measured (wall %v, CPU %v)", r.Name, r.Wall, r.CPU)
		}
	}
	for _, r := range g.Rows[1:] {
		t.Logf("%s: %.2f× the CPU per document of %s", r.Name, float64(r.CPU)/float64(g.Rows[0].CPU), g.Rows[0].Name)
	}
}
