package pogen

import (
	"bytes"
	"strings"
	"sync"
	"time"

	"github.com/go-pdf/fpdf"
)

// cp1252 maps UTF-8 to the code page of the PDF core fonts. Building it parses
// a table, so it is done once and shared (the function only reads its map).
var cp1252 = sync.OnceValue(func() func(string) string {
	return fpdf.New("P", "mm", "A4", "").UnicodeTranslatorFromDescriptor("")
})

// fixedDate stamps every PDF so that the same seed gives the same bytes.
var fixedDate = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// nbAlias is replaced by the page count when the PDF is closed, so footers can
// say "Page 1 of 3" while page 1 is being written.
const nbAlias = "{nb}"

// writer places text line by line in millimetres. y is the baseline of the
// current line; callers advance it with nl. Page breaks are explicit (ensure)
// so that a table row is never split and the caller decides what repeats.
type writer struct {
	pdf                      *fpdf.Fpdf
	tr                       func(string) string
	family                   string
	size                     float64 // body size in pt
	lh                       float64 // line height in mm
	left, right, top, bottom float64
	pageH                    float64
	y                        float64
	pages                    int
	onBreak                  func() // draws what continues a page (header, table head)
	footer                   func() // draws the page footer before leaving a page
}

func newWriter(letter bool, family string, size, margin float64) *writer {
	paper := "A4"
	if letter {
		paper = "Letter"
	}
	p := fpdf.New("P", "mm", paper, "")
	p.SetCreationDate(fixedDate)
	p.SetModificationDate(fixedDate)
	p.SetCatalogSort(true)
	p.SetAutoPageBreak(false, 0)
	p.AliasNbPages(nbAlias)
	p.SetProducer("pogen", false)
	pw, ph := p.GetPageSize()
	w := &writer{pdf: p, tr: cp1252(), family: family, size: size,
		left: margin, right: pw - margin, top: margin + 4, bottom: ph - margin - 6, pageH: ph}
	w.setSize(size)
	p.AddPage()
	w.pages = 1
	w.y = w.top
	w.font("", 1)
	return w
}

// setSize changes the body size (tables shrink it to fit their columns).
func (w *writer) setSize(size float64) {
	w.size = size
	w.lh = size * 0.3528 * 1.28
}

// font selects a style ("", "B", "I") at scale × the body size.
func (w *writer) font(style string, scale float64) {
	w.pdf.SetFont(w.family, style, w.size*scale)
}

func (w *writer) width(s string) float64 { return w.pdf.GetStringWidth(w.tr(s)) }

// text draws s with its left edge at x on the current line.
func (w *writer) text(x float64, s string) {
	if s != "" {
		w.pdf.Text(x, w.y, w.tr(s))
	}
}

// textR draws s with its right edge at xr.
func (w *writer) textR(xr float64, s string) { w.text(xr-w.width(s), s) }

// textC centres s between x1 and x2.
func (w *writer) textC(x1, x2 float64, s string) { w.text((x1+x2-w.width(s))/2, s) }

// nl advances n lines.
func (w *writer) nl(n float64) { w.y += n * w.lh }

// fits reports whether n more lines (starting with the current one) fit.
func (w *writer) fits(n float64) bool { return w.y+(n-1)*w.lh <= w.bottom }

// ensure starts a new page unless n lines fit.
func (w *writer) ensure(n float64) bool {
	if w.fits(n) {
		return false
	}
	w.breakPage()
	return true
}

func (w *writer) breakPage() {
	if w.footer != nil {
		w.footer()
	}
	w.pdf.AddPage()
	w.pages++
	w.y = w.top
	w.font("", 1)
	if w.onBreak != nil {
		w.onBreak()
	}
}

// rule draws a horizontal line just below the current baseline.
func (w *writer) rule(x1, x2 float64) {
	y := w.y + w.lh*0.3
	w.pdf.SetLineWidth(0.2)
	w.pdf.Line(x1, y, x2, y)
}

// box draws a rectangle around n lines starting at the current line.
func (w *writer) box(x1, x2 float64, n float64) {
	top := w.y - w.lh*0.8
	w.pdf.SetLineWidth(0.25)
	w.pdf.Rect(x1, top, x2-x1, n*w.lh+w.lh*0.2, "D")
}

// wrap splits s into lines no wider than width, breaking at spaces (and
// inside a word only when the word alone is too wide).
func (w *writer) wrap(s string, width float64) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		try := word
		if cur != "" {
			try = cur + " " + word
		}
		if w.width(try) <= width || cur == "" && w.width(word) <= width {
			cur = try
			continue
		}
		if cur != "" {
			out = append(out, cur)
		}
		cur = word
		for w.width(cur) > width && len([]rune(cur)) > 1 {
			rs := []rune(cur)
			cut := len(rs) - 1
			for cut > 1 && w.width(string(rs[:cut])) > width {
				cut--
			}
			out = append(out, string(rs[:cut]))
			cur = string(rs[cut:])
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// close finishes the last page and returns the PDF.
func (w *writer) close() ([]byte, error) {
	if w.footer != nil {
		w.footer()
	}
	var b bytes.Buffer
	err := w.pdf.Output(&b)
	return b.Bytes(), err
}
