// Package pdfopts hands the PDF settings of the configuration down to the
// text engine. It is apart from pkg/config because importing pkg/pdftext
// links the PDF engines: only programs that read PDFs import it, so the
// dispatcher's binary stays without them.
package pdfopts

import (
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/pdftext"
)

// Options are the text engine options cfg selects (INTAKE_PDF_ENGINE,
// INTAKE_PDF_TIMEOUT, INTAKE_PDF_WORKERS, INTAKE_PDF_RESIDENT_BIN,
// INTAKE_OCR_PAGE_TIMEOUT, the clients' fair share of the helpers), with
// OCR on where tesseract is installed. Every program that reads PDFs starts
// its one engine from these.
func Options(cfg config.Config) pdftext.Options {
	opts := pdftext.DefaultOptions()
	opts.Engine, opts.Timeout, opts.Workers = cfg.PDFEngine, cfg.PDFTimeout, cfg.PDFWorkers
	opts.ResidentBin = cfg.PDFResidentBin
	opts.OCRPageTimeout = cfg.OCRPageTimeout
	opts.Fair = cfg.Fair()
	return opts
}
