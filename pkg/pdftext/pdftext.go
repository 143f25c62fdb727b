package pdftext

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/fairshare"
)

// Engine names, as accepted by Options.Engine and recorded in Page.Engine.
const (
	EngineAuto      = "auto"
	EngineResident  = "resident"
	EnginePdftotext = "pdftotext"
	EnginePdfium    = "pdfium"
	EngineOCR       = "ocr"
)

// DefaultTimeout is the document deadline New applies when Options.Timeout
// is zero, and INTAKE_PDF_TIMEOUT's default.
const DefaultTimeout = 20 * time.Second

// Defaults applied by New to zero Options fields.
const (
	DefaultMaxOutputBytes = 16 << 20
	// DefaultSubprocessMemory is the address-space limit of pdftotext,
	// pdftoppm and tesseract. It is an address-space (virtual) limit, so it
	// has to leave room for shared libraries and thread stacks.
	DefaultSubprocessMemory = 1 << 30
	// DefaultWasmMemory caps the linear memory of one pdfium instance: 4096
	// wasm pages. DESIGN.md measured that this makes a 1 GiB flate bomb fail
	// after about a second instead of growing the process to 4.5 GB.
	DefaultWasmMemory = 4096 * wasmPageSize
	// DefaultResidentRecycleDocs is how many documents one resident helper
	// serves before it is replaced: poppler's caches and heap fragmentation
	// never shrink, a fresh process costs a few milliseconds.
	DefaultResidentRecycleDocs = 500
	// DefaultResidentMaxRSS: a helper whose resident set is above this after
	// a document is replaced (a large document leaves its heap behind).
	DefaultResidentMaxRSS = 128 << 20
	// DefaultFallbackIdle is how long auto keeps its pdfium fallback after
	// its last use; closing it returns the wasm memory (~200 MiB) to the OS.
	DefaultFallbackIdle = time.Minute
)

// ErrUnreadable reports that a PDF cannot be read: it is broken, hostile,
// encrypted or produces more text than allowed. Retrying will not help.
var ErrUnreadable = errors.New("pdf unreadable")

// ErrTimeout reports that extraction exceeded Options.Timeout. It is permanent
// for workers too: the same PDF takes as long next time.
var ErrTimeout = errors.New("pdf extraction timed out")

// ErrUnavailable reports that a requested engine cannot run here (binary not
// installed). New returns it; Extract never does.
var ErrUnavailable = errors.New("pdf engine unavailable")

// ErrBadRegion reports a Region no engine can crop (negative sizes, pages
// out of order): a template problem, not the document's.
var ErrBadRegion = errors.New("invalid pdf region")

// Page is the text of one page. Number counts from 1. Engine is the engine
// that produced Text: "resident", "pdftotext", "pdfium" or "ocr".
type Page struct {
	Number int
	Text   string
	Engine string
}

// Text is the text of a document, page by page. Warnings says what was not
// read and why (a page whose OCR ran out of its budget is left empty), for
// the document's events and the debug view; the text is usable without it.
type Text struct {
	Pages    []Page
	Warnings []string
	// Damage lists the repairs poppler reported while reading a broken
	// PDF's structure (a loop in the page tree, a stream length past the
	// end of the file, a rebuilt cross-reference table; damage.go): the
	// text is what was left after them and may be incomplete or wrong.
	// Empty for an intact PDF and for engines that do not report repairs
	// (pdfium).
	Damage []string
}

// String returns the pages joined the way `pdftotext -layout` prints them:
// each page followed by a form feed.
func (t *Text) String() string {
	var b strings.Builder
	for _, p := range t.Pages {
		b.WriteString(p.Text)
		b.WriteByte('\f')
	}
	return b.String()
}

// Engines returns the distinct engines that produced the pages, in order of
// first use.
func (t *Text) Engines() []string {
	var out []string
	for _, p := range t.Pages {
		found := false
		for _, e := range out {
			if e == p.Engine {
				found = true
				break
			}
		}
		if !found {
			out = append(out, p.Engine)
		}
	}
	return out
}

// Engine extracts layout text from a PDF. Extract is safe for concurrent use.
// It returns an error wrapping ErrUnreadable for PDFs that cannot be read and
// one wrapping ErrTimeout when Options.Timeout (or ctx) expires; in both cases
// the engine stays usable. Close releases processes and wasm instances.
//
// ExtractRegion returns the text of a crop (a template field's area): the
// pages FirstPage..LastPage, each cut to the rectangle, numbered as in the
// document, with the same errors as Extract. A region with negative values
// or LastPage before FirstPage is an error wrapping ErrBadRegion.
type Engine interface {
	Name() string
	Extract(ctx context.Context, pdf []byte) (*Text, error)
	ExtractRegion(ctx context.Context, pdf []byte, r Region) (*Text, error)
	Close() error
}

// Options configure New. The zero value is usable: it selects "auto", a 20 s
// timeout, GOMAXPROCS pdfium workers and no OCR; DefaultOptions turns OCR on
// when tesseract is installed.
type Options struct {
	// Engine is auto (default), resident, pdftotext, pdfium or ocr. auto uses
	// the resident helper when it runs here, else pdftotext when it is
	// installed, else pdfium, and falls back to pdfium when the first fails
	// on a document. ocr renders and OCRs every page.
	Engine string
	// ResidentBin is the pdftext-resident helper of the resident engine
	// (INTAKE_PDF_RESIDENT_BIN). Empty: pdftext-resident next to the
	// running executable, then in PATH.
	ResidentBin string
	// ResidentRecycleDocs replaces a helper after this many documents;
	// defaults to DefaultResidentRecycleDocs.
	ResidentRecycleDocs int
	// ResidentMaxRSS replaces a helper whose resident set exceeds it after
	// a document; defaults to DefaultResidentMaxRSS.
	ResidentMaxRSS int64
	// FallbackIdle closes auto's pdfium fallback after this long without a
	// document; defaults to DefaultFallbackIdle.
	FallbackIdle time.Duration
	// Timeout bounds one Extract call, OCR included (INTAKE_PDF_TIMEOUT).
	// Defaults to 20 s.
	Timeout time.Duration
	// Workers sizes the warm pdfium instance pool and the number of resident
	// helpers (INTAKE_PDF_WORKERS). Defaults to GOMAXPROCS.
	Workers int
	// Fair shares the resident helpers between tenants (the context's
	// fairshare.TenantOf): a tenant's share while others wait, reserve
	// helpers for tenants holding none, least helper time first. The zero
	// value hands helpers out first come, first served; services set it
	// from INTAKE_CLIENT_SHARE, INTAKE_CLIENT_BURST and
	// INTAKE_CLIENT_COST_HALF_LIFE (pdfopts.Options).
	Fair fairshare.Policy
	// MaxOutputBytes caps the text of one document (and the output read from
	// any subprocess). Defaults to 16 MiB.
	MaxOutputBytes int64
	// MemoryLimitBytes caps the memory of one extraction: the address space
	// of each subprocess (a resident helper included) and the linear memory
	// of a pdfium instance. Zero
	// means DefaultSubprocessMemory and DefaultWasmMemory respectively.
	MemoryLimitBytes int64
	// OCR enables tesseract for pages with no characters and an image. New
	// fails with ErrUnavailable when it is set and tesseract is missing.
	OCR bool
	// OCRLanguages is passed to tesseract -l. Defaults to "eng+deu".
	OCRLanguages string
	// OCRPageTimeout bounds rendering and OCR of one page, within Timeout
	// (INTAKE_OCR_PAGE_TIMEOUT); a page over it is skipped with a warning.
	// Defaults to DefaultOCRPageTimeout.
	OCRPageTimeout time.Duration
}

// DefaultOptions returns the zero Options with OCR enabled when tesseract is
// installed, which is what services should start from.
func DefaultOptions() Options {
	_, err := exec.LookPath("tesseract")
	return Options{Engine: EngineAuto, OCR: err == nil}
}

func (o Options) withDefaults() Options {
	if o.Engine == "" {
		o.Engine = EngineAuto
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.OCRLanguages == "" {
		o.OCRLanguages = "eng+deu"
	}
	if o.ResidentRecycleDocs <= 0 {
		o.ResidentRecycleDocs = DefaultResidentRecycleDocs
	}
	if o.ResidentMaxRSS <= 0 {
		o.ResidentMaxRSS = DefaultResidentMaxRSS
	}
	if o.FallbackIdle <= 0 {
		o.FallbackIdle = DefaultFallbackIdle
	}
	return o
}

// New returns the engine selected by opts.Engine. It returns an error
// wrapping ErrUnavailable when that engine's programs are not installed and
// an error for an unknown engine name. Starting the pdfium engine compiles
// the wasm module (cached on disk after the first time).
func New(opts Options) (Engine, error) {
	opts = opts.withDefaults()
	var ocr *ocrRunner
	if opts.OCR || opts.Engine == EngineOCR {
		r, err := newOCRRunner(opts)
		if err != nil {
			return nil, err
		}
		ocr = r
	}
	switch opts.Engine {
	case EngineResident:
		return newResident(opts, ocr)
	case EnginePdftotext:
		return newPdftotext(opts, ocr)
	case EnginePdfium:
		return newPdfium(opts, ocr)
	case EngineOCR:
		return &ocrEngine{opts: opts, ocr: ocr}, nil
	case EngineAuto:
		return newAuto(opts, ocr)
	default:
		return nil, fmt.Errorf("pdftext: unknown engine %q (want auto, resident, pdftotext, pdfium or ocr)", opts.Engine)
	}
}

// autoEngine prefers the resident helper, then pdftotext, and falls back to
// pdfium per document. The pdfium pool is started lazily, because compiling
// the wasm module costs seconds and most deployments never need it, and it
// is closed again after Options.FallbackIdle without a document, because
// its instance keeps up to ~200 MiB of wasm memory.
type autoEngine struct {
	opts    Options
	ocr     *ocrRunner
	primary Engine // resident or pdftotext; nil when neither runs here

	mu       sync.Mutex
	fallback Engine
	inFlight int         // documents on the fallback now
	lastUse  time.Time   // when the last fallback document finished
	idle     *time.Timer // closes an unused fallback
	closed   bool
}

func newAuto(opts Options, ocr *ocrRunner) (Engine, error) {
	a := &autoEngine{opts: opts, ocr: ocr}
	if r, err := newResident(opts, ocr); err == nil {
		a.primary = r
	} else if p, err := newPdftotext(opts, ocr); err == nil {
		a.primary = p
	}
	return a, nil
}

func (a *autoEngine) Name() string { return EngineAuto }

// acquireFallback returns the pdfium engine, starting it when needed, and
// counts the caller as using it until releaseFallback.
func (a *autoEngine) acquireFallback() (Engine, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errors.New("pdftext: engine closed")
	}
	if a.fallback == nil {
		opts := a.opts
		if a.primary != nil {
			// Only documents the primary engine cannot read come here: one
			// warm instance (~200 MiB of wasm memory at most) is enough,
			// instead of a pool the size of the primary's concurrency.
			opts.Workers = 1
		}
		e, err := newPdfium(opts, a.ocr)
		if err != nil {
			return nil, err
		}
		a.fallback = e
	}
	a.inFlight++
	return a.fallback, nil
}

// releaseFallback ends a use and arms the idle timer. Only a fallback that
// serves documents the primary could not read is closed when idle; without
// a primary, pdfium is the engine and stays warm.
func (a *autoEngine) releaseFallback() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight--
	a.lastUse = time.Now()
	if a.primary == nil || a.closed {
		return
	}
	if a.idle == nil {
		a.idle = time.AfterFunc(a.opts.FallbackIdle, a.closeIdleFallback)
	} else {
		a.idle.Reset(a.opts.FallbackIdle)
	}
}

func (a *autoEngine) closeIdleFallback() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fallback == nil || a.inFlight > 0 || a.closed {
		return
	}
	if wait := a.opts.FallbackIdle - time.Since(a.lastUse); wait > 0 {
		a.idle.Reset(wait)
		return
	}
	_ = a.fallback.Close()
	a.fallback = nil
}

// fallbackOpen reports whether the pdfium fallback is running (tests).
func (a *autoEngine) fallbackOpen() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fallback != nil
}

func (a *autoEngine) Extract(ctx context.Context, pdf []byte) (*Text, error) {
	return a.run(ctx, func(e Engine) (*Text, error) { return e.Extract(ctx, pdf) })
}

func (a *autoEngine) ExtractRegion(ctx context.Context, pdf []byte, r Region) (*Text, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	return a.run(ctx, func(e Engine) (*Text, error) { return e.ExtractRegion(ctx, pdf, r) })
}

// run applies fn to the primary engine and, when the primary cannot read
// the document, to the pdfium fallback.
func (a *autoEngine) run(ctx context.Context, fn func(Engine) (*Text, error)) (*Text, error) {
	var err error
	if a.primary != nil {
		var t *Text
		t, err = fn(a.primary)
		// A timeout is not retried with the other engine: it would double the
		// time a hostile document holds a worker; nor is a decompression
		// bomb, which pdfium would inflate until its memory cap.
		if err == nil || errors.Is(err, ErrTimeout) || errors.Is(err, ErrBadRegion) || errors.Is(err, errBomb) || ctx.Err() != nil {
			return t, err
		}
	}
	fb, ferr := a.acquireFallback()
	if ferr != nil {
		if err != nil {
			return nil, err
		}
		return nil, ferr
	}
	defer a.releaseFallback()
	t, err2 := fn(fb)
	if err != nil && err2 != nil {
		return nil, fmt.Errorf("%w (pdfium fallback: %v)", err, err2)
	}
	return t, err2
}

func (a *autoEngine) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.idle != nil {
		a.idle.Stop()
	}
	var errs []error
	if a.primary != nil {
		errs = append(errs, a.primary.Close())
	}
	if a.fallback != nil {
		errs = append(errs, a.fallback.Close())
	}
	return errors.Join(errs...)
}

// deadline derives the per-document context. A context that ends because of
// our timeout is reported as ErrTimeout; a caller's cancellation is passed
// through as ctx.Err().
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, ErrTimeout)
}

// ctxErr converts a finished per-document context into the error Extract
// returns: our own timeout and a caller's deadline are ErrTimeout, a caller's
// cancellation stays context.Canceled.
func ctxErr(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrTimeout) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
	}
	return ctx.Err()
}

// splitPages turns pdftotext-style output (pages terminated by form feeds)
// into pages numbered from first.
func splitPages(out, engine string, first int) []Page {
	out = strings.TrimSuffix(out, "\f")
	parts := strings.Split(out, "\f")
	pages := make([]Page, len(parts))
	for i, p := range parts {
		pages[i] = Page{Number: first + i, Text: p, Engine: engine}
	}
	return pages
}

func (r Region) validate() error {
	if r.FirstPage < 0 || r.LastPage < 0 || r.X < 0 || r.Y < 0 || r.W < 0 || r.H < 0 || r.Resolution < 0 {
		return fmt.Errorf("pdftext: %w %+v: negative value", ErrBadRegion, r)
	}
	if r.LastPage > 0 && r.LastPage < max(r.FirstPage, 1) {
		return fmt.Errorf("pdftext: %w %+v: last page before first page", ErrBadRegion, r)
	}
	return nil
}

// dpi is the region's resolution, pdftotext's 72 when unset.
func (r Region) dpi() int {
	if r.Resolution == 0 {
		return 72
	}
	return r.Resolution
}

// cropped reports whether the region cuts the pages: pdftotext crops only
// when one of -x -y -W -H is non-zero.
func (r Region) cropped() bool { return r.X != 0 || r.Y != 0 || r.W != 0 || r.H != 0 }

// points returns the rectangle in PDF points (1/72 in) from the top-left
// corner of the page.
func (r Region) points() (x, y, w, h float64) {
	s := 72 / float64(r.dpi())
	return float64(r.X) * s, float64(r.Y) * s, float64(r.W) * s, float64(r.H) * s
}
