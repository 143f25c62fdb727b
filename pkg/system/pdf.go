package system

import (
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/pdftext"
)

// PDFOptions are the text engine options cfg selects (INTAKE_PDF_ENGINE,
// INTAKE_PDF_TIMEOUT, INTAKE_PDF_WORKERS, INTAKE_PDF_RESIDENT_BIN), with OCR
// on where tesseract is installed. Every program that reads PDFs starts its
// one engine from these.
func PDFOptions(cfg config.Config) pdftext.Options {
	opts := pdftext.DefaultOptions()
	opts.Engine, opts.Timeout, opts.Workers = cfg.PDFEngine, cfg.PDFTimeout, cfg.PDFWorkers
	opts.ResidentBin = cfg.PDFResidentBin
	opts.OCRPageTimeout = cfg.OCRPageTimeout
	opts.Fair = FairPolicy(cfg)
	return opts
}
