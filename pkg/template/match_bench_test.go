package template_test

import (
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// BenchmarkSetMatch is keyword selection over invoice2data's 220 templates
// for each of its 16 golden documents (the text extracted once): one op is
// one document.
func BenchmarkSetMatch(b *testing.B) {
	benchmarkSelect(b, func(set *template.Set, text string) *template.Template {
		tpl, _ := set.Match(text)
		return tpl
	})
}

// BenchmarkSetChoose is BenchmarkSetMatch without the trace (Set.Choose,
// what Run and the golden phase use when nobody reads the trace).
func BenchmarkSetChoose(b *testing.B) {
	benchmarkSelect(b, (*template.Set).Choose)
}

func benchmarkSelect(b *testing.B, choose func(*template.Set, string) *template.Template) {
	root := filepath.Join(templatetest.SharedDir(b), "corpus", "invoice2data")
	set := loadGoldenSet(b, root)
	var texts []string
	for _, p := range goldenCases(b, root) {
		texts = append(texts, templatetest.PDFText(b, p))
	}
	// CPU per document next to ns/op: on a shared machine the wall time
	// says more about the neighbours than about Match.
	cpu0, n := repotest.ProcessCPU(b), 0
	for i := 0; b.Loop(); i++ {
		if choose(set, texts[i%len(texts)]) == nil {
			b.Fatal("no template matched")
		}
		n++
	}
	b.ReportMetric(float64(repotest.ProcessCPU(b)-cpu0)/float64(n), "cpu-ns/op")
}
