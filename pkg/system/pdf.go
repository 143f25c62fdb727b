package system

import (
	"context"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
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
	return opts
}

// AreaFunc crops pdf through eng for template fields with an `area`
// (invoice2data's pdftotext -f -l -r -x -y -W -H), so a crop reads the
// document with the same engine as the whole text.
func AreaFunc(eng pdftext.Engine, pdf []byte) template.AreaFunc {
	return func(ctx context.Context, a template.Area) (string, error) {
		t, err := eng.ExtractRegion(ctx, pdf, pdftext.Region(a))
		if err != nil {
			return "", err
		}
		return t.String(), nil
	}
}
