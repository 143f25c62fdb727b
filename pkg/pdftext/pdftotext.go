package pdftext

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
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
	if err := screen(pdf); err != nil {
		return nil, fmt.Errorf("pdftotext: %w", err)
	}
	return withInput(ctx, e.opts.Timeout, pdf, func(ctx context.Context, dir, file string) (*Text, error) {
		t, err := e.run(ctx, dir, []string{"-layout", "-enc", "UTF-8", file, "-"}, 1)
		if err != nil {
			return nil, err
		}
		if err := ocrBlankPages(ctx, e.ocr, dir, file, t); err != nil {
			return nil, err
		}
		return t, nil
	})
}

// ExtractRegion runs pdftotext with the crop options exactly as
// invoice2data's area does: -f -l -r -x -y -W -H.
func (e *pdftotextEngine) ExtractRegion(ctx context.Context, pdf []byte, r Region) (*Text, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	first := max(r.FirstPage, 1)
	return withInput(ctx, e.opts.Timeout, pdf, func(ctx context.Context, dir, file string) (*Text, error) {
		args := []string{"-layout", "-enc", "UTF-8",
			"-f", strconv.Itoa(first), "-l", strconv.Itoa(r.LastPage), "-r", strconv.Itoa(r.dpi()),
			"-x", strconv.Itoa(r.X), "-y", strconv.Itoa(r.Y), "-W", strconv.Itoa(r.W), "-H", strconv.Itoa(r.H),
			file, "-"}
		return e.run(ctx, dir, args, first)
	})
}

func (e *pdftotextEngine) run(ctx context.Context, dir string, args []string, first int) (*Text, error) {
	out, stderr, err := e.sb.runStderr(ctx, dir, e.bin, args, nil)
	if err != nil {
		return nil, fmt.Errorf("pdftotext: %w", err)
	}
	return &Text{Pages: splitPages(string(out), EnginePdftotext, first), Damage: damageOf(strings.Split(string(stderr), "\n"))}, nil
}

// ocrBlankPages OCRs the pages of t without text that hold an image, for
// the engines built on poppler; file is the document in the private
// directory dir. ocr nil means OCR is off.
func ocrBlankPages(ctx context.Context, ocr *ocrRunner, dir, file string, t *Text) error {
	if ocr == nil {
		return nil
	}
	for i := range t.Pages {
		if strings.TrimSpace(t.Pages[i].Text) != "" {
			continue
		}
		n := t.Pages[i].Number
		res, err := ocr.filePage(ctx, dir, file, n, nil)
		if err != nil {
			return fmt.Errorf("ocr page %d: %w", n, err)
		}
		res.apply(t, i) // the text, or a warning when the page's budget ran out
	}
	return nil
}
