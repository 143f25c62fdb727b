package generic_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// BenchmarkRead reads the pages of the corpus POs without a template
// (cpu-ms/page is the figure issue 24 bounds: ≤ 15 ms per page), and as
// the baseline of the same run the Contoso POs with their hand-written
// template.
func BenchmarkRead(b *testing.B) {
	contoso := corpusTexts(b, "orders/contoso-po-*.pdf")
	all := append(corpusTexts(b, "synthetic/*.pdf"), contoso...)
	ctx := context.Background()
	b.Run("generic", func(b *testing.B) {
		perPage(b, all, func(text string) error {
			_, err := generic.Read(ctx, text, generic.Options{})
			return err
		})
	})
	b.Run("generic-contoso", func(b *testing.B) {
		perPage(b, contoso, func(text string) error {
			_, err := generic.Read(ctx, text, generic.Options{})
			return err
		})
	})
	set, err := template.LoadWith(template.LoadOptions{}, filepath.Join(templatetest.RepoRoot(b), "deploy", "templates"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("template-contoso", func(b *testing.B) {
		perPage(b, contoso, func(text string) error {
			_, err := set.Run(ctx, text, template.RunOptions{Template: "contoso-po"})
			return err
		})
	})
}

func corpusTexts(b *testing.B, glob string) []string {
	files, _ := filepath.Glob(filepath.Join(templatetest.SharedDir(b), "corpus", glob))
	if len(files) == 0 {
		b.Fatalf("no corpus files for %s", glob)
	}
	texts := make([]string, len(files))
	for i, f := range files {
		texts[i] = templatetest.PDFText(b, f)
	}
	return texts
}

// perPage runs fn over texts and reports the process CPU per page.
func perPage(b *testing.B, texts []string, fn func(string) error) {
	pages := 0
	for _, t := range texts {
		pages += countPages(t)
	}
	cpu0 := repotest.ProcessCPU(b)
	for b.Loop() {
		for _, t := range texts {
			if err := fn(t); err != nil {
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
