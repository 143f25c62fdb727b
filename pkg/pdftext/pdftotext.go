package pdftext

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// pdftotextEngine runs `pdftotext -layout -enc UTF-8 FILE -` (poppler-utils),
// the layout invoice2data templates are written against.
type pdftotextEngine struct {
	opts Options
	bin  string
	sb   sandbox
	ocr  *ocrRunner // nil: OCR off
}

func newPdftotext(opts Options, ocr *ocrRunner) (Engine, error) {
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		return nil, fmt.Errorf("pdftotext: %w: %w", ErrUnavailable, err)
	}
	return &pdftotextEngine{opts: opts, bin: bin, sb: newSandbox(opts), ocr: ocr}, nil
}

func (e *pdftotextEngine) Name() string { return EnginePdftotext }

func (e *pdftotextEngine) Close() error { return nil }

func (e *pdftotextEngine) Extract(ctx context.Context, pdf []byte) (*Text, error) {
	return withInput(ctx, e.opts.Timeout, pdf, e.extract)
}

func (e *pdftotextEngine) extract(ctx context.Context, dir, file string) (*Text, error) {
	out, err := e.sb.run(ctx, dir, e.bin, []string{"-layout", "-enc", "UTF-8", file, "-"}, nil)
	if err != nil {
		return nil, fmt.Errorf("pdftotext: %w", err)
	}
	t := &Text{Pages: splitPages(string(out), EnginePdftotext)}
	if e.ocr != nil {
		for i := range t.Pages {
			if strings.TrimSpace(t.Pages[i].Text) != "" {
				continue
			}
			res, err := e.ocr.filePage(ctx, dir, file, i+1, nil)
			if err != nil {
				return nil, fmt.Errorf("ocr page %d: %w", i+1, err)
			}
			res.apply(t, i)
		}
	}
	return t, nil
}
