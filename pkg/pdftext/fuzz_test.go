package pdftext

import (
	"errors"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
)

// FuzzExtract feeds arbitrary bytes to the in-process pdfium engine (the one
// whose crashes would take the worker down): no panic, and either an error
// of the documented kinds or a text within the output cap.
func FuzzExtract(f *testing.F) {
	order := orderPDF()
	f.Add(order)
	f.Add(pdftexttest.PDF([]string{"Order No: 1", "Total: 9.99 EUR"}, []string{"page 2"}))
	f.Add(order[:len(order)/2])
	f.Add([]byte("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 1 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"))
	f.Fuzz(func(t *testing.T, pdf []byte) {
		// A short deadline keeps the fuzzer moving past inputs that make
		// PDFium loop; the timeout path is part of what is fuzzed.
		shared := sharedPdfium(t)
		eng := &pdfiumEngine{opts: Options{Timeout: 2 * time.Second, MaxOutputBytes: DefaultMaxOutputBytes}, pool: shared.pool}
		got, err := eng.Extract(t.Context(), pdf)
		if err != nil {
			if !errors.Is(err, ErrUnreadable) && !errors.Is(err, ErrTimeout) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if n := len(got.String()) - len(got.Pages); n > DefaultMaxOutputBytes {
			t.Fatalf("output %d bytes exceeds the cap", n)
		}
	})
}
