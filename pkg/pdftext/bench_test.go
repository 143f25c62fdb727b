package pdftext

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
)

// BenchmarkExtract measures ms and CPU-ms per corpus document for each
// engine (not run by the tests; `go test -run - -bench Extract ./pdftext/`).
// CPU counts this process and its children: pdftotext runs (reaped) and
// resident helpers (alive), so the engines compare on equal terms.
func BenchmarkExtract(b *testing.B) {
	var docs [][]byte
	for _, f := range pdftexttest.CorpusTextPDFs(b) {
		pdf, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, pdf)
	}
	for _, name := range []string{EngineResident, EnginePdftotext, EnginePdfium} {
		b.Run(name, func(b *testing.B) {
			var eng Engine
			switch name {
			case EnginePdfium:
				eng = sharedPdfium(b)
			case EngineResident:
				e, err := New(Options{Engine: EngineResident, Workers: 1, ResidentBin: pdftexttest.ResidentBin(b)})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				eng = e
			default:
				requireTool(b, "pdftotext")
				e, err := New(Options{Engine: EnginePdftotext})
				if err != nil {
					b.Fatal(err)
				}
				eng = e
			}
			b.ResetTimer()
			cpu0 := treeCPU()
			for i := 0; i < b.N; i++ {
				for _, pdf := range docs {
					if _, err := eng.Extract(b.Context(), pdf); err != nil {
						b.Fatal(err)
					}
				}
			}
			n := float64(b.N * len(docs))
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/n, "ms/doc")
			b.ReportMetric(float64((treeCPU()-cpu0).Microseconds())/1000/n, "cpu-ms/doc")
		})
	}
}

// treeCPU is the CPU time of this process, its reaped children and its
// live children, from /proc (clock ticks of 10 ms).
func treeCPU() time.Duration {
	ticks := func(pid string) (ppid int, self, reaped int64) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return 0, 0, 0
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		num := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
		ppid, _ = strconv.Atoi(f[1])
		return ppid, num(11) + num(12), num(13) + num(14)
	}
	_, self, reaped := ticks("self")
	total := self + reaped
	me := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if ppid, s, r := ticks(e.Name()); ppid == me {
			total += s + r
		}
	}
	return time.Duration(total) * 10 * time.Millisecond
}
