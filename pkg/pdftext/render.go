package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Page images for people (the ops console's review page, issue 27): the
// pages of a document drawn as PNG by poppler's pdftoppm, with the words
// pdftotext finds on them and where, so a reviewer sees what was read
// beside the value. The document is a tenant's, so every program runs in
// the helpers' sandbox (sandbox_linux.go) and every dimension is bounded:
// at most MaxPages pages are described and drawn, each page at a
// resolution that keeps it within MaxPixels, each program within its
// deadline and memory limit. What a limit cut is said in the result
// (Layout.Notes, PageInfo.Note) rather than failing the whole document.

// Defaults of RenderOptions' zero fields.
const (
	// DefaultRenderMaxPages is how many pages are described and drawn.
	DefaultRenderMaxPages = 20
	// DefaultRenderDPI is the resolution of a page of ordinary size: a
	// letter page is 935 × 1210 pixels, readable on a laptop screen.
	DefaultRenderDPI = 110
	// DefaultRenderMaxPixels bounds one page image (about 2000 × 2000); a
	// larger page is drawn at a lower resolution.
	DefaultRenderMaxPixels = 4_000_000
	// DefaultRenderTimeout bounds each program run (the layout, one page).
	DefaultRenderTimeout = 15 * time.Second
	// DefaultRenderMaxPNGBytes bounds one page image's file.
	DefaultRenderMaxPNGBytes = 16 << 20
)

// minRenderDPI is the lowest resolution a page is drawn at: below it a
// page (larger than 20 m at 4 Mpx) would be a blur, so it is not drawn.
const minRenderDPI = 1.0

// RenderOptions bound Layout and RenderPage.
type RenderOptions struct {
	MaxPages  int     // DefaultRenderMaxPages
	DPI       float64 // DefaultRenderDPI
	MaxPixels int64   // DefaultRenderMaxPixels
	// Timeout bounds each program run: one for the layout, one per page.
	Timeout time.Duration // DefaultRenderTimeout
	// MemoryLimitBytes is each program's address space
	// (DefaultSubprocessMemory).
	MemoryLimitBytes int64
	// MaxOutputBytes caps what a program prints (the word positions) and a
	// page image's file (DefaultMaxOutputBytes, DefaultRenderMaxPNGBytes).
	MaxOutputBytes int64
	MaxPNGBytes    int64
}

func (o RenderOptions) withDefaults() RenderOptions {
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultRenderMaxPages
	}
	if o.DPI <= 0 {
		o.DPI = DefaultRenderDPI
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultRenderMaxPixels
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultRenderTimeout
	}
	if o.MemoryLimitBytes <= 0 {
		o.MemoryLimitBytes = DefaultSubprocessMemory
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.MaxPNGBytes <= 0 {
		o.MaxPNGBytes = DefaultRenderMaxPNGBytes
	}
	return o
}

func (o RenderOptions) sandbox() sandbox {
	return newSandbox(Options{Timeout: o.Timeout, MemoryLimitBytes: o.MemoryLimitBytes, MaxOutputBytes: o.MaxOutputBytes})
}

// Layout describes a document's first pages for drawing them: their
// sizes, the resolution each is drawn at and the words on them.
type Layout struct {
	PageCount int        `json:"page_count"` // pages in the document
	Pages     []PageInfo `json:"pages"`      // the first min(PageCount, MaxPages)
	// Notes say what the limits left out or reduced, for the reader.
	Notes []string `json:"notes,omitempty"`
}

// PageInfo is one page of a Layout.
type PageInfo struct {
	Number int `json:"number"`
	// Width and Height are the page's size in points as drawn (after its
	// rotation); word boxes are in the same space.
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	// DPI is the resolution RenderPage draws it at; 0: it is not drawn
	// (Note says why).
	DPI   float64 `json:"dpi"`
	Words []Word  `json:"words,omitempty"`
	Note  string  `json:"note,omitempty"`
}

// Word is a word pdftotext found on a page, with its box in points from
// the page's top left corner. Line numbers the word's line on the page
// (words of one line share it).
type Word struct {
	Text string  `json:"t"`
	X0   float64 `json:"x0"`
	Y0   float64 `json:"y0"`
	X1   float64 `json:"x1"`
	Y1   float64 `json:"y1"`
	Line int     `json:"l"`
}

// RenderLayout reads the page count, the sizes of the first pages and the words
// on them (pdfinfo and pdftotext -bbox-layout, in the sandbox) and decides
// each page's resolution within opts' limits. ErrUnreadable: poppler
// cannot read the document, or it is hostile (a flate bomb, too much
// text); ErrTimeout: a program ran past opts.Timeout.
func RenderLayout(ctx context.Context, pdf []byte, opts RenderOptions) (*Layout, error) {
	opts = opts.withDefaults()
	if err := screen(pdf); err != nil {
		return nil, fmt.Errorf("layout: %w", err)
	}
	info, err := exec.LookPath("pdfinfo")
	if err != nil {
		return nil, fmt.Errorf("pdfinfo: %w: %w", ErrUnavailable, err)
	}
	text, err := exec.LookPath("pdftotext")
	if err != nil {
		return nil, fmt.Errorf("pdftotext: %w: %w", ErrUnavailable, err)
	}
	var l *Layout
	_, err = withInput(ctx, 2*opts.Timeout, pdf, func(ctx context.Context, dir, file string) (*Text, error) {
		sb, last := opts.sandbox(), strconv.Itoa(opts.MaxPages)
		out, err := sb.run(ctx, dir, info, []string{"-f", "1", "-l", last, file}, nil)
		if err != nil {
			return nil, fmt.Errorf("pdfinfo: %w", err)
		}
		if l, err = parsePdfinfo(out, opts.MaxPages); err != nil {
			return nil, err
		}
		out, err = sb.run(ctx, dir, text, []string{"-bbox-layout", "-f", "1", "-l", last, file, "-"}, nil)
		if err != nil {
			return nil, fmt.Errorf("pdftotext -bbox-layout: %w", err)
		}
		return nil, l.addWords(out)
	})
	if err != nil {
		return nil, err
	}
	l.decide(opts)
	return l, nil
}

var (
	pagesLine = regexp.MustCompile(`^Pages:\s+(\d+)\s*$`)
	sizeLine  = regexp.MustCompile(`^Page\s+(\d+)\s+size:\s+([0-9.]+) x ([0-9.]+) pts`)
	rotLine   = regexp.MustCompile(`^Page\s+(\d+)\s+rot:\s+(-?\d+)`)
)

// parsePdfinfo reads the page count and the first pages' sizes (rotated
// as drawn) from pdfinfo -f 1 -l max. Its other lines (title, author) are
// the document's and ignored.
func parsePdfinfo(out []byte, max int) (*Layout, error) {
	l := &Layout{}
	rot := map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := pagesLine.FindStringSubmatch(line); m != nil {
			l.PageCount, _ = strconv.Atoi(m[1])
		} else if m := sizeLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			w, _ := strconv.ParseFloat(m[2], 64)
			h, _ := strconv.ParseFloat(m[3], 64)
			if n == len(l.Pages)+1 && n <= max {
				l.Pages = append(l.Pages, PageInfo{Number: n, Width: w, Height: h})
			}
		} else if m := rotLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			rot[n], _ = strconv.Atoi(m[2])
		}
	}
	if l.PageCount == 0 || len(l.Pages) == 0 {
		return nil, fmt.Errorf("pdfinfo: %w: no pages", ErrUnreadable)
	}
	for i, p := range l.Pages {
		if r := ((rot[p.Number] % 360) + 360) % 360; r == 90 || r == 270 {
			l.Pages[i].Width, l.Pages[i].Height = p.Height, p.Width
		}
	}
	return l, nil
}

// bboxDoc is pdftotext -bbox-layout's XHTML: pages of flows of blocks of
// lines of words.
type bboxDoc struct {
	Pages []struct {
		Width  float64 `xml:"width,attr"`
		Height float64 `xml:"height,attr"`
		Lines  []struct {
			Words []struct {
				Text string  `xml:",chardata"`
				X0   float64 `xml:"xMin,attr"`
				Y0   float64 `xml:"yMin,attr"`
				X1   float64 `xml:"xMax,attr"`
				Y1   float64 `xml:"yMax,attr"`
			} `xml:"word"`
		} `xml:"flow>block>line"`
	} `xml:"body>doc>page"`
}

// addWords puts the words of pdftotext -bbox-layout's output on l's pages.
func (l *Layout) addWords(out []byte) error {
	var doc bboxDoc
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("pdftotext -bbox-layout: %w: %v", ErrUnreadable, err)
	}
	for i := range min(len(doc.Pages), len(l.Pages)) {
		p := doc.Pages[i]
		for n, line := range p.Lines {
			for _, w := range line.Words {
				l.Pages[i].Words = append(l.Pages[i].Words, Word{Text: w.Text, X0: w.X0, Y0: w.Y0, X1: w.X1, Y1: w.Y1, Line: n})
			}
		}
		if p.Width > 0 && p.Height > 0 {
			// The space the word boxes are in.
			l.Pages[i].Width, l.Pages[i].Height = p.Width, p.Height
		}
	}
	return nil
}

// decide sets each page's resolution within opts and notes what the limits
// changed.
func (l *Layout) decide(opts RenderOptions) {
	if l.PageCount > len(l.Pages) {
		l.Notes = append(l.Notes, fmt.Sprintf("The document has %d pages; the first %d are shown (the limit is %d).",
			l.PageCount, len(l.Pages), opts.MaxPages))
	}
	for i := range l.Pages {
		p := &l.Pages[i]
		p.DPI = opts.DPI
		if p.Width <= 0 || p.Height <= 0 {
			p.DPI, p.Note = 0, "The page has no size; it is not drawn."
			continue
		}
		px := (p.Width / 72 * opts.DPI) * (p.Height / 72 * opts.DPI)
		if px <= float64(opts.MaxPixels) {
			continue
		}
		p.DPI = math.Floor(opts.DPI*math.Sqrt(float64(opts.MaxPixels)/px)*100) / 100
		size := fmt.Sprintf("%.0f × %.0f mm", p.Width/72*25.4, p.Height/72*25.4)
		if p.DPI < minRenderDPI {
			p.DPI, p.Note = 0, fmt.Sprintf("Page %d is %s: too large to draw within %d pixels.", p.Number, size, opts.MaxPixels)
			continue
		}
		p.Note = fmt.Sprintf("Page %d is %s: drawn at %g dpi to stay within %d pixels.", p.Number, size, p.DPI, opts.MaxPixels)
	}
	for _, p := range l.Pages {
		if p.Note != "" {
			l.Notes = append(l.Notes, p.Note)
		}
	}
}

// RenderPage draws page n of pdf at dpi (a PageInfo's) as PNG with
// pdftoppm in the sandbox, within opts' time, memory and size limits.
// Errors as RenderLayout.
func RenderPage(ctx context.Context, pdf []byte, n int, dpi float64, opts RenderOptions) ([]byte, error) {
	opts = opts.withDefaults()
	if n < 1 || n > opts.MaxPages || dpi < minRenderDPI || dpi > opts.DPI {
		return nil, fmt.Errorf("render page %d at %g dpi: outside the limits (pages 1-%d, %g-%g dpi)",
			n, dpi, opts.MaxPages, minRenderDPI, opts.DPI)
	}
	if err := screen(pdf); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	bin, err := exec.LookPath("pdftoppm")
	if err != nil {
		return nil, fmt.Errorf("pdftoppm: %w: %w", ErrUnavailable, err)
	}
	var img []byte
	_, err = withInput(ctx, opts.Timeout, pdf, func(ctx context.Context, dir, file string) (*Text, error) {
		p, root := strconv.Itoa(n), filepath.Join(dir, "page")
		args := []string{"-r", strconv.FormatFloat(dpi, 'f', -1, 64), "-f", p, "-l", p, "-png", "-singlefile", file, root}
		if _, err := opts.sandbox().run(ctx, dir, bin, args, nil); err != nil {
			return nil, fmt.Errorf("pdftoppm: %w", err)
		}
		img, err = readCapped(root+".png", opts.MaxPNGBytes)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("pdftoppm: %w: not a PNG: %v", ErrUnreadable, err)
	}
	if int64(cfg.Width)*int64(cfg.Height) > 2*opts.MaxPixels {
		// dpi came from the layout: the page drawn is not the page measured.
		return nil, fmt.Errorf("pdftoppm: %w: page %d is %d × %d pixels", ErrUnreadable, n, cfg.Width, cfg.Height)
	}
	return img, nil
}

// readCapped reads a file the helper wrote, refusing one over max bytes.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read page image: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read page image: %w", err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("pdftoppm: %w: %w (%d bytes)", ErrUnreadable, errOutputTooLarge, max)
	}
	return b, nil
}

// PageText joins a page's words line by line, for tests and debugging.
func (p PageInfo) PageText() string {
	var b strings.Builder
	for i, w := range p.Words {
		if i > 0 {
			if w.Line != p.Words[i-1].Line {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w.Text)
	}
	return b.String()
}
