package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/responses"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
)

const wasmPageSize = 64 << 10

// pdfiumAPI is the part of go-pdfium's wasm implementation this engine
// calls. We call the implementation directly instead of through the pool's
// instance wrapper: the wrapper reads its closed flag without a lock, which
// races with Kill from the deadline goroutine; the implementation has its
// own mutex and the wasm calls are interrupted through the worker context.
type pdfiumAPI interface {
	OpenDocument(*requests.OpenDocument) (*responses.OpenDocument, error)
	FPDF_CloseDocument(*requests.FPDF_CloseDocument) (*responses.FPDF_CloseDocument, error)
	FPDF_GetPageCount(*requests.FPDF_GetPageCount) (*responses.FPDF_GetPageCount, error)
	FPDF_LoadPage(*requests.FPDF_LoadPage) (*responses.FPDF_LoadPage, error)
	FPDF_ClosePage(*requests.FPDF_ClosePage) (*responses.FPDF_ClosePage, error)
	FPDF_GetPageBoundingBox(*requests.FPDF_GetPageBoundingBox) (*responses.FPDF_GetPageBoundingBox, error)
	FPDFText_LoadPage(*requests.FPDFText_LoadPage) (*responses.FPDFText_LoadPage, error)
	FPDFText_ClosePage(*requests.FPDFText_ClosePage) (*responses.FPDFText_ClosePage, error)
	FPDFText_CountChars(*requests.FPDFText_CountChars) (*responses.FPDFText_CountChars, error)
	FPDFText_GetUnicode(*requests.FPDFText_GetUnicode) (*responses.FPDFText_GetUnicode, error)
	FPDFText_GetCharOrigin(*requests.FPDFText_GetCharOrigin) (*responses.FPDFText_GetCharOrigin, error)
	FPDFText_GetLooseCharBox(*requests.FPDFText_GetLooseCharBox) (*responses.FPDFText_GetLooseCharBox, error)
	FPDFPage_CountObjects(*requests.FPDFPage_CountObjects) (*responses.FPDFPage_CountObjects, error)
	FPDFPage_GetObject(*requests.FPDFPage_GetObject) (*responses.FPDFPage_GetObject, error)
	FPDFPageObj_GetType(*requests.FPDFPageObj_GetType) (*responses.FPDFPageObj_GetType, error)
	RenderPageInDPI(*requests.RenderPageInDPI) (*responses.RenderPageInDPI, error)
}

// compilation caches are shared per directory for the whole process: every
// engine (and every test) reuses the compiled pdfium module.
var (
	cacheMu sync.Mutex
	caches  = map[string]wazero.CompilationCache{}
)

func compilationCache() wazero.CompilationCache {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "docintake", "wazero")
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if c, ok := caches[dir]; ok {
		return c
	}
	var c wazero.CompilationCache
	if err := os.MkdirAll(dir, 0o700); err == nil {
		c, err = wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			c = nil
		}
	}
	if c == nil {
		// An unwritable cache dir only costs start-up time.
		c = wazero.NewCompilationCache()
	}
	caches[dir] = c
	return c
}

// pdfiumEngine extracts text in-process with PDFium compiled to WebAssembly
// (no cgo, nothing to install). Each Extract borrows a warm instance from
// the pool; an instance that failed or was killed is discarded and the pool
// creates a fresh one.
type pdfiumEngine struct {
	opts Options
	ocr  *ocrRunner
	pool pdfium.Pool

	// killed counts instances killed on a deadline; tests read it.
	mu     sync.Mutex
	killed int
}

func newPdfium(opts Options, ocr *ocrRunner) (*pdfiumEngine, error) {
	mem := opts.MemoryLimitBytes
	if mem <= 0 {
		mem = DefaultWasmMemory
	}
	pages := uint32(min(mem/wasmPageSize, 65536))
	wasm, err := withMemoryMax(pdfiumWasm, pages)
	if err != nil {
		return nil, fmt.Errorf("pdfium: cap wasm memory: %w", err)
	}
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(pages).
		WithMemoryCapacityFromMax(true).
		WithCompilationCache(compilationCache())
	pool, err := webassembly.Init(webassembly.Config{
		MinIdle:       opts.Workers,
		MaxIdle:       opts.Workers,
		MaxTotal:      opts.Workers,
		ReuseWorkers:  true,
		WASM:          wasm,
		RuntimeConfig: rc,
		// An empty FSConfig: no directory mounts. go-pdfium mounts "/" when
		// this is nil.
		FSConfig: wazero.NewFSConfig(),
		Stdout:   io.Discard,
		Stderr:   io.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("pdfium: start: %w", err)
	}
	return &pdfiumEngine{opts: opts, ocr: ocr, pool: pool}, nil
}

func (e *pdfiumEngine) Name() string { return EnginePdfium }

func (e *pdfiumEngine) Close() error { return e.pool.Close() }

type pdfiumResult struct {
	text *Text
	err  error
}

func (e *pdfiumEngine) Extract(ctx context.Context, pdf []byte) (*Text, error) {
	return e.do(ctx, pdf, nil)
}

// ExtractRegion keeps, on the region's pages, the characters pdftotext keeps
// for the same -x -y -W -H: those whose origin lies in the rectangle (a
// character starting left of it counts when it reaches into it), and lays
// them out as Extract does.
func (e *pdfiumEngine) ExtractRegion(ctx context.Context, pdf []byte, r Region) (*Text, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	return e.do(ctx, pdf, &r)
}

// do runs one extraction (of the region when r is set) on a pooled
// instance under the per-document deadline.
func (e *pdfiumEngine) do(ctx context.Context, pdf []byte, r *Region) (*Text, error) {
	ctx, cancel := withDeadline(ctx, e.opts.Timeout)
	defer cancel()
	inst, err := e.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pdfium: wait for instance: %w", ctxErr(ctx))
		}
		return nil, fmt.Errorf("pdfium: get instance: %w", err)
	}
	api, ok := inst.GetImplementation().(pdfiumAPI)
	if !ok {
		_ = inst.Kill()
		return nil, errors.New("pdfium: unexpected implementation type")
	}
	done := make(chan pdfiumResult, 1)
	go func() {
		var res pdfiumResult
		defer func() {
			if p := recover(); p != nil {
				res = pdfiumResult{err: fmt.Errorf("pdfium: %w: panic: %v", ErrUnreadable, p)}
			}
			done <- res
		}()
		t, err := e.extract(ctx, api, pdf, r)
		res = pdfiumResult{text: t, err: err}
	}()
	select {
	case res := <-done:
		if res.err != nil || ctx.Err() != nil {
			// A failed call may leave PDFium's heap in any state: never
			// reuse the instance.
			_ = inst.Kill()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("pdfium: %w", ctxErr(ctx))
			}
			return nil, res.err
		}
		if err := inst.Close(); err != nil {
			return nil, fmt.Errorf("pdfium: release instance: %w", err)
		}
		return res.text, nil
	case <-ctx.Done():
		// Kill cancels the worker context; with WithCloseOnContextDone the
		// running wasm call stops at once. That call may well return no
		// error, so the timeout is decided here, not from its result.
		_ = inst.Kill()
		<-done
		e.mu.Lock()
		e.killed++
		e.mu.Unlock()
		return nil, fmt.Errorf("pdfium: %w", ctxErr(ctx))
	}
}

func (e *pdfiumEngine) killedInstances() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.killed
}

func unreadable(op string, err error) error {
	return fmt.Errorf("pdfium: %s: %w: %w", op, ErrUnreadable, err)
}

func (e *pdfiumEngine) extract(ctx context.Context, api pdfiumAPI, pdf []byte, r *Region) (*Text, error) {
	doc, err := api.OpenDocument(&requests.OpenDocument{File: &pdf})
	if err != nil {
		return nil, unreadable("open", err)
	}
	defer api.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	count, err := api.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return nil, unreadable("page count", err)
	}
	if count.PageCount <= 0 {
		return nil, unreadable("page count", errors.New("document has no pages"))
	}
	t := &Text{}
	var total int64
	var dir string // private dir for OCR, created on first use
	defer func() {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}()
	first, last := 0, count.PageCount-1
	if r != nil {
		first = max(r.FirstPage, 1) - 1
		if r.LastPage > 0 {
			last = min(r.LastPage, count.PageCount) - 1
		}
	}
	for i := first; i <= last; i++ {
		if ctx.Err() != nil {
			return nil, ctxErr(ctx)
		}
		page, err := e.page(ctx, api, doc.Document, i, &dir, r, &t.Warnings)
		if err != nil {
			return nil, err
		}
		total += int64(len(page.Text))
		if total > e.opts.MaxOutputBytes {
			return nil, fmt.Errorf("pdfium: %w: %w (%d bytes)", ErrUnreadable, errOutputTooLarge, e.opts.MaxOutputBytes)
		}
		t.Pages = append(t.Pages, page)
	}
	return t, nil
}

// page extracts page i (0-based), cut to r's rectangle when r crops. Pages
// without characters that contain an image are rendered and OCRed when OCR
// is on (whole pages only: a crop of a scanned page is the OCR engine's).
func (e *pdfiumEngine) page(ctx context.Context, api pdfiumAPI, doc references.FPDF_DOCUMENT, i int, dir *string, r *Region, warnings *[]string) (Page, error) {
	lp, err := api.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: doc, Index: i})
	if err != nil {
		return Page{}, unreadable(fmt.Sprintf("load page %d", i+1), err)
	}
	defer api.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: lp.Page})
	ref := requests.Page{ByReference: &lp.Page}
	chars, err := pageChars(ctx, api, ref)
	if err != nil {
		if ctx.Err() != nil {
			return Page{}, ctxErr(ctx)
		}
		return Page{}, unreadable(fmt.Sprintf("text of page %d", i+1), err)
	}
	var clip box
	if bb, err := api.FPDF_GetPageBoundingBox(&requests.FPDF_GetPageBoundingBox{Page: ref}); err == nil {
		clip = box{float64(bb.Rect.Left), float64(bb.Rect.Bottom), float64(bb.Rect.Right), float64(bb.Rect.Top)}
	}
	if r != nil && r.cropped() {
		chars = cropChars(chars, *r, clip.top)
	}
	text := layoutPage(chars, clip)
	if strings.TrimSpace(text) != "" || e.ocr == nil || (r != nil && r.cropped()) || !hasImage(api, ref) {
		return Page{Number: i + 1, Text: text, Engine: EnginePdfium}, nil
	}
	img, err := renderPNG(api, ref)
	if err != nil {
		return Page{}, unreadable(fmt.Sprintf("render page %d", i+1), err)
	}
	if *dir == "" {
		d, err := helperTempDir()
		if err != nil {
			return Page{}, fmt.Errorf("pdfium ocr: %w", err)
		}
		*dir = d
	}
	res, err := e.ocr.imagePage(ctx, *dir, i+1, img, nil)
	if err != nil {
		return Page{}, fmt.Errorf("pdfium ocr page %d: %w", i+1, err)
	}
	if res.Warning != "" {
		*warnings = append(*warnings, res.Warning)
	}
	if !res.Read {
		return Page{Number: i + 1, Text: text, Engine: EnginePdfium}, nil
	}
	return Page{Number: i + 1, Text: res.Text, Engine: EngineOCR}, nil
}

// cropChars keeps the characters pdftotext keeps for the crop r on a page
// whose top edge is pageTop (PDF coordinates, y up): the origin at most at
// the right and bottom edges and not above the top edge, the character
// reaching the left edge. Characters without a box (generated spaces) stay:
// they only mark word breaks.
func cropChars(chars []glyph, r Region, pageTop float64) []glyph {
	x, y, w, h := r.points()
	left, right := x, x+w
	top, bottom := pageTop-y, pageTop-y-h
	if w <= 0 || h <= 0 {
		return nil
	}
	out := chars[:0:0]
	for _, c := range chars {
		if c.height() <= 0 {
			out = append(out, c)
			continue
		}
		if c.x > right || c.x+c.width() < left || c.y > top || c.y < bottom {
			continue
		}
		out = append(out, c)
	}
	return out
}

// pageChars reads every character of a page with its origin and loose box.
func pageChars(ctx context.Context, api pdfiumAPI, page requests.Page) ([]glyph, error) {
	tp, err := api.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: page})
	if err != nil {
		return nil, err
	}
	defer api.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := api.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return nil, err
	}
	chars := make([]glyph, 0, n.Count)
	for j := 0; j < n.Count; j++ {
		if j%512 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		u, err := api.FPDFText_GetUnicode(&requests.FPDFText_GetUnicode{TextPage: tp.TextPage, Index: j})
		if err != nil {
			return nil, err
		}
		g := glyph{r: rune(u.Unicode), idx: j}
		if g.r == ' ' || g.r == '\r' || g.r == '\n' || g.r == 0 {
			// Generated spaces and line breaks have no meaningful box; the
			// layout pass only needs to know where they are.
			chars = append(chars, g)
			continue
		}
		o, err := api.FPDFText_GetCharOrigin(&requests.FPDFText_GetCharOrigin{TextPage: tp.TextPage, Index: j})
		if err != nil {
			continue
		}
		box, err := api.FPDFText_GetLooseCharBox(&requests.FPDFText_GetLooseCharBox{TextPage: tp.TextPage, Index: j})
		if err != nil {
			continue
		}
		g.x, g.y = o.X, o.Y
		g.left, g.right = float64(box.Rect.Left), float64(box.Rect.Right)
		g.bottom, g.top = float64(box.Rect.Bottom), float64(box.Rect.Top)
		chars = append(chars, g)
	}
	return chars, nil
}

func hasImage(api pdfiumAPI, page requests.Page) bool {
	n, err := api.FPDFPage_CountObjects(&requests.FPDFPage_CountObjects{Page: page})
	if err != nil {
		return false
	}
	for k := 0; k < n.Count; k++ {
		obj, err := api.FPDFPage_GetObject(&requests.FPDFPage_GetObject{Page: page, Index: k})
		if err != nil {
			continue
		}
		typ, err := api.FPDFPageObj_GetType(&requests.FPDFPageObj_GetType{PageObject: obj.PageObject})
		if err == nil && typ.Type == enums.FPDF_PAGEOBJ_IMAGE {
			return true
		}
	}
	return false
}

func renderPNG(api pdfiumAPI, page requests.Page) ([]byte, error) {
	r, err := api.RenderPageInDPI(&requests.RenderPageInDPI{Page: page, DPI: ocrDPI})
	if err != nil {
		return nil, err
	}
	defer r.CleanupFunc()
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, r.Result.Image); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
