package generic_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// BenchmarkRead reads every page of the real and synthetic POs of the
// corpus without a template; cpu-ms/page is the figure issue 24 bounds
// (≤ 15 ms per page).
func BenchmarkRead(b *testing.B) {
	var texts []string
	pages := 0
	for _, glob := range []string{"orders/contoso-po-*.pdf", "synthetic/*.pdf"} {
		files, _ := filepath.Glob(filepath.Join(templatetest.SharedDir(b), "corpus", glob))
		for _, f := range files {
			text := templatetest.PDFText(b, f)
			texts = append(texts, text)
			pages += countPages(text)
		}
	}
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := repotest.ProcessCPU(b)
	for b.Loop() {
		for _, t := range texts {
			if _, err := generic.Read(ctx, t, generic.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	cpu := repotest.ProcessCPU(b) - cpu0
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*pages), "cpu-ms/page")
}

func countPages(text string) int {
	n := 1
	for i := 0; i < len(text)-1; i++ {
		if text[i] == '\f' {
			n++
		}
	}
	return n
}
