package pdftext

import (
	"os"
	"testing"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
)

// BenchmarkExtract measures ms per corpus document for each engine (not run
// by the tests; `go test -run - -bench Extract ./pdftext/`).
func BenchmarkExtract(b *testing.B) {
	var docs [][]byte
	for _, f := range pdftexttest.CorpusTextPDFs(b) {
		pdf, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, pdf)
	}
	for _, name := range []string{EnginePdftotext, EnginePdfium} {
		b.Run(name, func(b *testing.B) {
			var eng Engine = sharedPdfium(b)
			if name == EnginePdftotext {
				requireTool(b, "pdftotext")
				e, err := New(Options{Engine: EnginePdftotext})
				if err != nil {
					b.Fatal(err)
				}
				eng = e
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, pdf := range docs {
					if _, err := eng.Extract(b.Context(), pdf); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*len(docs)), "ms/doc")
		})
	}
}
