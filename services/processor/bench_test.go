package processor_test

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/stretchr/testify/require"
)

// BenchmarkProcessor (make bench-processor) drives INTAKE_BENCH_DOCS
// documents (default 300) through 1 and 2 processor processes on real
// PostgreSQL, JetStream and S3 (versitygw) and reports documents/s, p50 and
// p99 from upload (documents.created_at) to processed_* (the event's time),
// and each process's peak RSS. Uploads arrive in one burst from 8
// goroutines, the way a backlog is worked off. The document is a Contoso
// purchase order from ../shared when present, else a generated order.
// Run with -benchtime 1x: one pass per process count.
func BenchmarkProcessor(b *testing.B) {
	n := 300
	if v, err := strconv.Atoi(os.Getenv("INTAKE_BENCH_DOCS")); err == nil && v > 0 {
		n = v
	}
	pdf, template, kind := orderPDF("BENCH-1", nil), "acme", "generated acme order"
	if p := filepath.Join(filepath.Dir(repoRoot(b)), "shared", "corpus", "orders", "contoso-po-Adatum-Adel.pdf"); fileExists(p) {
		pdf, template, kind = mustRead(b, p), "contoso-po", "contoso-po-Adatum-Adel.pdf"
	}
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			for range b.N {
				benchProcessor(b, procs, n, pdf, template, kind)
			}
		})
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func benchProcessor(b *testing.B, procs, n int, pdf []byte, template, kind string) {
	env := map[string]string{"INTAKE_LOG_LEVEL": "warn", "INTAKE_PROCESSOR_CONCURRENCY": "0"}
	// The engine under test (the tests pin pdftotext): e.g.
	// INTAKE_PDF_ENGINE=resident INTAKE_PDF_RESIDENT_BIN=$PWD/bin/pdftext-resident.
	for _, k := range []string{"INTAKE_PDF_ENGINE", "INTAKE_PDF_RESIDENT_BIN"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	bd := setup(b, env)
	bd.addArticles()
	// Every copy of the one PO is processed as a new order, as measured
	// before duplicates were ignored (issue 28).
	if err := bd.st.SetDuplicateWindow(b.Context(), clientID, 0); err != nil {
		b.Fatal(err)
	}
	children := make([]*child, procs)
	for i := range children {
		children[i] = bd.startChild(b, nil)
	}
	// Ready: every process has a pull request open on the consumer.
	waitFor(b, 60*time.Second, func() error {
		s, err := queue.Stats(b.Context(), bd.js, bd.qcfg.Stream, bd.qcfg.Processor.Durable)
		if err != nil {
			return err
		}
		if s.Waiting < procs {
			return fmt.Errorf("%d of %d processors waiting", s.Waiting, procs)
		}
		return nil
	})

	b.ResetTimer()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range jobs {
				bd.upload(pdf, docOpts{template: template})
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	var lat []time.Duration
	var first, last time.Time
	waitFor(b, 10*time.Minute, func() error {
		rows, err := bd.st.Pool().Query(b.Context(), `SELECT d.created_at, e.at FROM documents d
			JOIN document_events e ON e.document_id = d.id AND e.from_state <> e.to_state
				AND (e.to_state LIKE 'processed_%' OR e.to_state = 'dlq')`)
		if err != nil {
			return err
		}
		defer rows.Close()
		lat, first, last = lat[:0], time.Time{}, time.Time{}
		for rows.Next() {
			var created, done time.Time
			if err := rows.Scan(&created, &done); err != nil {
				return err
			}
			lat = append(lat, done.Sub(created))
			if first.IsZero() || created.Before(first) {
				first = created
			}
			if done.After(last) {
				last = done
			}
		}
		if len(lat) < n {
			return fmt.Errorf("%d of %d processed", len(lat), n)
		}
		return rows.Err()
	})
	b.StopTimer()
	var states []string
	rows, err := bd.st.CountByState(b.Context())
	require.NoError(b, err)
	for s, c := range rows {
		states = append(states, fmt.Sprintf("%s=%d", s, c))
	}
	slices.Sort(states)

	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	perSec := float64(n) / last.Sub(first).Seconds()
	var rss []string
	for i, c := range children {
		kb := peakRSSKiB(c.cmd.Process.Pid)
		rss = append(rss, fmt.Sprintf("proc%d %.0f MiB", i+1, float64(kb)/1024))
		b.ReportMetric(float64(kb)/1024, fmt.Sprintf("MiB-peak-rss-proc%d", i+1))
		// The resident engine's helpers are the processor's children.
		if n, kb := childrenRSSKiB(c.cmd.Process.Pid); n > 0 {
			rss = append(rss, fmt.Sprintf("its %d resident helpers %.0f MiB", n, float64(kb)/1024))
		}
	}
	b.ReportMetric(perSec, "docs/s")
	b.ReportMetric(float64(pct(0.50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(pct(0.99).Milliseconds()), "p99-ms")
	fmt.Printf("processor bench: %d × %s, %d process(es) × concurrency %d (GOMAXPROCS): %.1f docs/s, upload→processed p50 %s p99 %s, peak RSS %s [%s]\n",
		n, kind, procs, cmp.Or(bd.cfg.ProcessorConcurrency, 1), perSec, pct(0.50).Round(time.Millisecond),
		pct(0.99).Round(time.Millisecond), strings.Join(rss, ", "), strings.Join(states, " "))
}

// childrenRSSKiB sums the current resident set (VmRSS) of pid's children.
func childrenRSSKiB(pid int) (n, kb int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var ppid, rss int
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 {
				switch f[0] {
				case "PPid:":
					ppid, _ = strconv.Atoi(f[1])
				case "VmRSS:":
					rss, _ = strconv.Atoi(f[1])
				}
			}
		}
		if ppid == pid {
			n, kb = n+1, kb+rss
		}
	}
	return n, kb
}

// peakRSSKiB reads a process's peak resident set (VmHWM) from /proc; 0
// where /proc is not available.
func peakRSSKiB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			return kb
		}
	}
	return 0
}
