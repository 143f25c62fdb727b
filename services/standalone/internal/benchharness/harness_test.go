package benchharness_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/services/standalone/internal/benchharness"
)

// TestSmoke runs every phase of `make bench` with tiny durations on the
// generated orders (so it does not depend on ../shared) and checks that
// each phase produced figures and the section lands in a Markdown file.
// It asserts nothing about speed. INTAKE_CHAOS_BIN names prebuilt service
// binaries (make test passes bin/); without it they are built first.
func TestSmoke(t *testing.T) {
	needServers(t)
	var out bytes.Buffer
	rep, err := benchharness.Run(t.Context(), benchharness.Options{
		BinDir: os.Getenv("INTAKE_CHAOS_BIN"), Clients: 4, IngestDuration: time.Second, E2EDuration: 2 * time.Second,
		LatencyDuration: time.Second, ExtractRounds: 1, BigUpload: 4 << 20, Generated: true, Out: &out,
		ScaleBudget: -1, // TestScalingShort runs that phase
	})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatalf("bench harness: %v", err)
	}
	if err := rep.OK(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Corpus, "generated") {
		t.Errorf("corpus %q, want the generated orders", rep.Corpus)
	}
	if rep.E2E.Statuses["success"] == 0 {
		t.Errorf("no webhook with status success: %v", rep.E2E.Statuses)
	}

	md := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := os.WriteFile(md, []byte("# Benchmarks\n\n## Dispatcher\n\nkept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	table := rep.Markdown("make bench")
	for range 2 { // the second write replaces the first
		if err := benchharness.WriteSection(md, table); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.HasPrefix(got, "# Benchmarks\n\n## Dispatcher\n\nkept\n") {
		t.Errorf("other sections not kept:\n%s", got)
	}
	if n := strings.Count(got, "Command: `make bench`"); n != 1 {
		t.Errorf("section written %d times, want once:\n%s", n, got)
	}
	for _, want := range []string{"PutObject", "1 processor", "2 processor processes", "pdftotext", "peak RSS", "4 MiB upload"} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q", want)
		}
	}
}

func TestWriteSectionCreatesFile(t *testing.T) {
	md := filepath.Join(t.TempDir(), "B.md")
	if err := benchharness.WriteSection(md, "table\n"); err != nil {
		t.Fatal(err)
	}
	if err := benchharness.WriteSection(md, "new table\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(md)
	if s := string(b); !strings.Contains(s, "new table\n") || strings.Contains(s, "\ntable\n") {
		t.Errorf("got:\n%s", s)
	}
}

// The golden phase's rows: each extractor with its equality count, and the
// CPU ratio to the first row; a skipped peer says why.
func TestMarkdownGoldenRows(t *testing.T) {
	r := benchharness.Report{Golden: benchharness.Golden{Documents: 16, Rounds: 5, Rows: []benchharness.GoldenRow{
		{Name: "docintake, resident engine", Equal: 16, Wall: 8 * time.Millisecond, CPU: 5 * time.Millisecond},
		{Name: "docintake, one pdftotext process per document", Equal: 15, Wall: 20 * time.Millisecond, CPU: 10 * time.Millisecond},
	}, PeerSkipped: "pip install invoice2data failed | no index"}}
	md := r.Markdown("make bench")
	for _, want := range []string{
		"docintake, resident engine | 16/16 equal; 8.0 ms wall, 5.0 ms CPU per document |",
		"one pdftotext process per document | 15/16 equal; 20.0 ms wall, 10.0 ms CPU per document = **2.00×** the CPU of the first row |",
		"invoice2data itself | skipped: pip install invoice2data failed / no index |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
