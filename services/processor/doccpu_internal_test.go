package processor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// anyMapper resolves every key, as the benchmark's articles table would.
type anyMapper struct{}

func (anyMapper) Lookup(_ context.Context, _, key string) (string, bool, error) {
	return "M-" + key, true, nil
}

// BenchmarkDocumentCPU is the processor's own Go work for one Contoso
// purchase order, in process: the attachment scan (embedded.Run), the
// contoso-po template on the extracted text, and the openTRANS and result
// JSON renderings. Text extraction (a helper process) and the store, queue
// and S3 round trips are left out: they are not this process's CPU. One op
// is one document, cycling through the Contoso orders of ../shared.
func BenchmarkDocumentCPU(b *testing.B) {
	orders := filepath.Join(templatetest.SharedDir(b), "corpus", "orders")
	paths, err := filepath.Glob(filepath.Join(orders, "contoso-po-*.pdf"))
	if err != nil || len(paths) == 0 {
		b.Skipf("no Contoso orders in %s", orders)
	}
	set, err := template.Load(filepath.Join(templatetest.RepoRoot(b), "deploy", "templates"))
	if err != nil {
		b.Fatal(err)
	}
	tpl, ok := set.ByName("contoso-po")
	if !ok {
		b.Fatal("no contoso-po template")
	}
	one, err := template.NewSet(tpl)
	if err != nil {
		b.Fatal(err)
	}
	v := &catalogue.Version{Name: "contoso-po", Number: 1, SHA256: make([]byte, 32), Template: tpl, Set: one}
	type doc struct {
		pdf  []byte
		text string
	}
	var docs []doc
	for _, p := range paths {
		pdf, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, doc{pdf, templatetest.PDFText(b, p)})
	}
	ctx := context.Background()
	d := document.Document{LogID: "log", MessageID: "msg", Template: "contoso-po"}
	opts := template.RunOptions{Template: v.Name, Mapper: anyMapper{}, Mode: d.ResultMode, ReceivedAt: time.Now()}
	b.ReportAllocs()
	cpu0, n := repotest.ProcessCPU(b), 0
	for i := 0; b.Loop(); i++ {
		n++
		dc := docs[i%len(docs)]
		a, err := embedded.Run(ctx, v.Set, dc.pdf, embedded.Limits{}, opts)
		if err != nil || a.Run != nil || a.Unreadable != nil {
			b.Fatalf("embedded: %v %+v", err, a)
		}
		run, err := v.Set.Run(ctx, dc.text, opts)
		if err != nil {
			b.Fatal(err)
		}
		if run.Outcome.Status != template.OutcomeSuccess {
			b.Fatalf("outcome %s", run.Outcome)
		}
		if _, err := opentrans.Marshal(run.Order, opentrans.WriteOptions{GenerationTime: time.Now()}); err != nil {
			b.Fatal(err)
		}
		if _, err := marshalResult(d, v, run.Order, "text (pdftotext)"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(repotest.ProcessCPU(b)-cpu0)/float64(n), "cpu-ns/op")
}
