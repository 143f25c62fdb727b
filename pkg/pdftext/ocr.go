package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ocrDPI is the resolution pages are rendered at for tesseract; 300 dpi is
// what tesseract's documentation recommends for body text.
const ocrDPI = 300

// ocrRunner runs tesseract on rendered pages. Pages are rendered by
// pdftoppm when the caller has the PDF on disk (pdftotext and ocr engines)
// and by pdfium inside the wasm instance otherwise.
type ocrRunner struct {
	tesseract string
	pdftoppm  string // "" when not installed
	pdfimages string // "" when not installed
	langs     string
	sb        sandbox
}

func newOCRRunner(opts Options) (*ocrRunner, error) {
	t, err := exec.LookPath("tesseract")
	if err != nil {
		return nil, fmt.Errorf("ocr: tesseract: %w: %w", ErrUnavailable, err)
	}
	r := &ocrRunner{tesseract: t, langs: opts.OCRLanguages, sb: newSandbox(opts)}
	r.pdftoppm, _ = exec.LookPath("pdftoppm")
	r.pdfimages, _ = exec.LookPath("pdfimages")
	return r, nil
}

// recognize OCRs one PNG image. dir is the private working directory of the
// current extraction.
func (r *ocrRunner) recognize(ctx context.Context, dir string, png []byte) (string, error) {
	out, err := r.sb.run(ctx, dir, r.tesseract,
		[]string{"stdin", "stdout", "-l", r.langs, "-c", "page_separator="}, png)
	if err != nil {
		return "", fmt.Errorf("tesseract: %w", err)
	}
	return strings.TrimRight(string(out), "\f\n ") + "\n", nil
}

// popplerPage OCRs page n (1-based) of file when it contains an image. ok is
// false when the page has no image (a blank page is left blank) or pdftoppm
// is not installed.
func (r *ocrRunner) popplerPage(ctx context.Context, dir, file string, n int) (text string, ok bool, err error) {
	if r.pdftoppm == "" {
		return "", false, nil
	}
	if r.pdfimages != "" {
		has, err := r.hasImage(ctx, dir, file, n)
		if err != nil || !has {
			// pdfimages failing on a page pdftotext could read is not worth
			// failing the document for; the page just stays empty.
			return "", false, ctxOrNil(ctx)
		}
	}
	png, err := r.render(ctx, dir, file, n)
	if err != nil {
		return "", false, err
	}
	text, err = r.recognize(ctx, dir, png)
	return text, err == nil, err
}

// hasImage reports whether page n lists at least one image in
// `pdfimages -list` (two header lines, then one line per image).
func (r *ocrRunner) hasImage(ctx context.Context, dir, file string, n int) (bool, error) {
	p := strconv.Itoa(n)
	out, err := r.sb.run(ctx, dir, r.pdfimages, []string{"-list", "-f", p, "-l", p, file}, nil)
	if err != nil {
		return false, err
	}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines++
		}
	}
	return lines > 2, nil
}

func (r *ocrRunner) render(ctx context.Context, dir, file string, n int) ([]byte, error) {
	p := strconv.Itoa(n)
	root := filepath.Join(dir, "page-"+p)
	if _, err := r.sb.run(ctx, dir, r.pdftoppm,
		[]string{"-r", strconv.Itoa(ocrDPI), "-f", p, "-l", p, "-png", "-singlefile", file, root}, nil); err != nil {
		return nil, fmt.Errorf("pdftoppm: %w", err)
	}
	png, err := os.ReadFile(root + ".png")
	if err != nil {
		return nil, fmt.Errorf("read rendered page: %w", err)
	}
	_ = os.Remove(root + ".png")
	return png, nil
}

func ctxOrNil(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctxErr(ctx)
	}
	return nil
}

// ocrEngine OCRs every page, ignoring any text layer (Options.Engine "ocr").
type ocrEngine struct {
	opts Options
	ocr  *ocrRunner
}

func (e *ocrEngine) Name() string { return EngineOCR }

func (e *ocrEngine) Close() error { return nil }

func (e *ocrEngine) Extract(ctx context.Context, pdf []byte) (*Text, error) {
	if e.ocr.pdftoppm == "" {
		return nil, fmt.Errorf("ocr: pdftoppm: %w", ErrUnavailable)
	}
	return withInput(ctx, e.opts.Timeout, pdf, e.extract)
}

func (e *ocrEngine) extract(ctx context.Context, dir, file string) (*Text, error) {
	pagesDir := filepath.Join(dir, "pages")
	if err := helperDir(pagesDir); err != nil {
		return nil, fmt.Errorf("ocr: %w", err)
	}
	if _, err := e.ocr.sb.run(ctx, dir, e.ocr.pdftoppm,
		[]string{"-r", strconv.Itoa(ocrDPI), "-png", file, filepath.Join(pagesDir, "p")}, nil); err != nil {
		return nil, fmt.Errorf("ocr: pdftoppm: %w", err)
	}
	files, err := renderedPages(pagesDir)
	if err != nil {
		return nil, fmt.Errorf("ocr: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("ocr: %w: no pages rendered", ErrUnreadable)
	}
	t := &Text{}
	var total int64
	for i, f := range files {
		png, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ocr: %w", err)
		}
		text, err := e.ocr.recognize(ctx, dir, png)
		if err != nil {
			return nil, fmt.Errorf("ocr page %d: %w", i+1, err)
		}
		total += int64(len(text))
		if total > e.opts.MaxOutputBytes {
			return nil, fmt.Errorf("ocr: %w: %w", ErrUnreadable, errOutputTooLarge)
		}
		t.Pages = append(t.Pages, Page{Number: i + 1, Text: text, Engine: EngineOCR})
	}
	return t, nil
}

// renderedPages lists pdftoppm's p-N.png files in page order (pdftoppm pads
// N to the width of the page count, so sort numerically to be safe).
func renderedPages(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type page struct {
		n    int
		path string
	}
	var pages []page
	for _, e := range entries {
		name := e.Name()
		num := strings.TrimSuffix(strings.TrimPrefix(name, "p-"), ".png")
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		pages = append(pages, page{n, filepath.Join(dir, name)})
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].n < pages[j].n })
	out := make([]string, len(pages))
	for i, p := range pages {
		out[i] = p.path
	}
	return out, nil
}
