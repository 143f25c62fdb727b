// Package pdftexttest writes small PDFs for tests: text lines in Helvetica at
// given positions (so columns and label/value layouts are possible) and
// images (for OCR tests), plus Compare, which scores a layout text against a
// reference such as `pdftotext -layout`.
//
//	pdf := pdftexttest.PDF([]string{"PURCHASE ORDER", "PO Number: 4711"})
//	pdf = pdftexttest.Build(pdftexttest.Page{Texts: []pdftexttest.Text{
//		{X: 72, Y: 100, S: "Order No:"}, {X: 300, Y: 100, S: "4711"},
//	}})
//
// The output is a valid PDF 1.4 with a correct xref table; poppler and
// pdfium read it without warnings.
package pdftexttest

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"strings"
)

// A4 page size in points.
const (
	A4Width  = 595.0
	A4Height = 842.0
)

// Text is a run of text. X and Y are in points from the top-left corner of
// the page; Y is the baseline. Size defaults to 10 pt. Bold selects
// Helvetica-Bold.
type Text struct {
	X, Y float64
	Size float64
	Bold bool
	S    string
}

// Image places img at X, Y (top-left corner, points from the top-left of
// the page) scaled to W × H points. It is embedded as a JPEG (DCTDecode),
// grey when img is *image.Gray.
type Image struct {
	X, Y, W, H float64
	Img        image.Image
}

// Page is one page. Width and Height default to A4.
type Page struct {
	Width, Height float64
	Texts         []Text
	Images        []Image
}

// PDF returns a document with one page per argument; each string is a line
// of 10 pt Helvetica at x = 72 pt, lines 14 pt apart from y = 72 pt below
// the top edge.
func PDF(pages ...[]string) []byte {
	ps := make([]Page, len(pages))
	for i, lines := range pages {
		ps[i] = LinesPage(lines)
	}
	return Build(ps...)
}

// LinesPage is one page of PDF: the lines in 10 pt Helvetica at x = 72 pt,
// 14 pt apart from y = 72 pt, for documents that mix such a page with
// others (an image of a scanned page, say).
func LinesPage(lines []string) Page {
	var p Page
	for j, l := range lines {
		p.Texts = append(p.Texts, Text{X: 72, Y: 72 + 14*float64(j), S: l})
	}
	return p
}

// Build returns a document with the given pages.
func Build(pages ...Page) []byte {
	w := &writer{}
	w.buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	// Fixed object numbers: 1 catalog, 2 page tree, 3 Helvetica,
	// 4 Helvetica-Bold; pages and their content follow.
	const catalog, tree, font, bold = 1, 2, 3, 4
	next := 5
	type pageObjs struct{ page, content int }
	var objs []pageObjs
	var kids []string
	for range pages {
		objs = append(objs, pageObjs{next, next + 1})
		kids = append(kids, fmt.Sprintf("%d 0 R", next))
		next += 2
	}
	imageObj := map[[2]int]int{}
	for i, p := range pages {
		for j := range p.Images {
			imageObj[[2]int{i, j}] = next
			next++
		}
	}

	w.obj(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	w.obj(tree, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	w.obj(font, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	w.obj(bold, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	for i, p := range pages {
		width, height := p.Width, p.Height
		if width <= 0 {
			width = A4Width
		}
		if height <= 0 {
			height = A4Height
		}
		var xobjs []string
		var content bytes.Buffer
		for j, im := range p.Images {
			name := fmt.Sprintf("Im%d", j)
			xobjs = append(xobjs, fmt.Sprintf("/%s %d 0 R", name, imageObj[[2]int{i, j}]))
			fmt.Fprintf(&content, "q %s 0 0 %s %s %s cm /%s Do Q\n",
				num(im.W), num(im.H), num(im.X), num(height-im.Y-im.H), name)
		}
		for _, t := range p.Texts {
			size := t.Size
			if size <= 0 {
				size = 10
			}
			f := "F1"
			if t.Bold {
				f = "F2"
			}
			fmt.Fprintf(&content, "BT /%s %s Tf %s %s Td (%s) Tj ET\n",
				f, num(size), num(t.X), num(height-t.Y), escape(t.S))
		}
		res := fmt.Sprintf("/Font << /F1 %d 0 R /F2 %d 0 R >>", font, bold)
		if len(xobjs) > 0 {
			res += " /XObject << " + strings.Join(xobjs, " ") + " >>"
		}
		w.obj(objs[i].page, fmt.Sprintf(
			"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources << %s >> /Contents %d 0 R >>",
			tree, num(width), num(height), res, objs[i].content))
		w.stream(objs[i].content, "", content.Bytes())
		for j, im := range p.Images {
			w.image(imageObj[[2]int{i, j}], im.Img)
		}
	}
	return w.finish(next, catalog)
}

type writer struct {
	buf     bytes.Buffer
	offsets map[int]int
}

func (w *writer) obj(n int, body string) {
	w.start(n)
	w.buf.WriteString(body)
	w.buf.WriteString("\nendobj\n")
}

func (w *writer) start(n int) {
	if w.offsets == nil {
		w.offsets = map[int]int{}
	}
	w.offsets[n] = w.buf.Len()
	fmt.Fprintf(&w.buf, "%d 0 obj\n", n)
}

func (w *writer) stream(n int, dict string, data []byte) {
	w.start(n)
	fmt.Fprintf(&w.buf, "<< %s /Length %d >>\nstream\n", dict, len(data))
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
}

func (w *writer) image(n int, img image.Image) {
	var data bytes.Buffer
	if err := jpeg.Encode(&data, img, &jpeg.Options{Quality: 90}); err != nil {
		// jpeg.Encode fails only for images with zero size or a writer
		// error; both are bugs in the calling test.
		panic(fmt.Sprintf("pdftexttest: encode image: %v", err))
	}
	cs := "/DeviceRGB"
	if _, ok := img.(*image.Gray); ok {
		cs = "/DeviceGray"
	}
	b := img.Bounds()
	w.stream(n, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8 /Filter /DCTDecode",
		b.Dx(), b.Dy(), cs), data.Bytes())
}

func (w *writer) finish(size, root int) []byte {
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", size)
	for i := 1; i < size; i++ {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", w.offsets[i])
	}
	fmt.Fprintf(&w.buf, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", size, root, xref)
	return w.buf.Bytes()
}

func num(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// escape encodes s as a PDF literal string in WinAnsiEncoding; characters
// outside it become '?'.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		c, ok := winAnsi(r)
		if !ok {
			c = '?'
		}
		switch c {
		case '(', ')', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

func winAnsi(r rune) (byte, bool) {
	switch {
	case r == '€':
		return 0x80, true
	case r >= 0x20 && r < 0x7f, r >= 0xa0 && r <= 0xff:
		return byte(r), true
	}
	return 0, false
}
