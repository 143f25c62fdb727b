package embedded_test

import (
	"context"
	"os"
	"testing"

	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/embedded/embeddedtest"
)

// BenchmarkFind: attachments listed and read with pdfdetach and recognised,
// per PDF (BENCHMARKS.md "PDF attachments"): an Order-X order, a Factur-X
// invoice with two attachments, and two POs without any (the cost every
// text-only document pays: one pdfdetach -list when the PDF has object
// streams, a byte scan when it has none).
func BenchmarkFind(b *testing.B) {
	for _, f := range [][2]string{
		{"orders", "orderx-ex01-order-comfort.pdf"},
		{"other", "facturx-invoice-en16931.pdf"},
		{"orders", "contoso-po-Adatum-Adel.pdf"},
		{"synthetic", "alpine-1.pdf"},
	} {
		pdf, err := os.ReadFile(embeddedtest.Corpus(b, f[0], f[1]))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f[1], func(b *testing.B) {
			for b.Loop() {
				if _, err := embedded.Find(context.Background(), pdf, embedded.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
