package pdftext

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// glyph is one character as pdfium reports it, in PDF user space (y grows
// upwards). idx is its position in content-stream order.
type glyph struct {
	r                        rune
	x, y                     float64 // origin; y is the baseline
	left, right, bottom, top float64 // loose box
	idx                      int
}

// box is a rectangle in PDF user space.
type box struct{ left, bottom, right, top float64 }

func (b box) empty() bool { return b.right <= b.left || b.top <= b.bottom }

func (g glyph) width() float64  { return g.right - g.left }
func (g glyph) height() float64 { return g.top - g.bottom }

// layoutPage rebuilds `pdftotext -layout`-like text from positioned
// characters, following DESIGN.md's layout rules for the pdfium engine:
//
//  1. characters are grouped into lines by baseline, compared with the last
//     three lines, tolerance 0.5 × the smaller glyph height;
//  2. a glyph overlapping already placed glyphs of its row by > 50 % of its
//     width and > 3 positions away in character order moves to an extra row
//     after it (SAP/AS-400 underline rows drawn under the text);
//  3. duplicate glyphs (same char within 0.3 × width and height, > 3
//     positions apart) are dropped (Crystal Reports draws fields twice);
//  4. U+0002 becomes '-';
//  5. columns are padded only where the gap exceeds 1.5 × the page's median
//     character width and 1.2 × the glyph width; otherwise words are
//     separated by one space, taken from pdfium's explicit spaces or from a
//     gap.
//
// chars is the page's characters in content order, spaces included; spaces
// only mark word breaks, they are not placed. The result ends with a newline
// unless the page is empty.
//
// Like pdftotext, characters entirely outside the page's visible box (clip,
// in PDF coordinates; a zero box disables clipping) are dropped.
func layoutPage(chars []glyph, clip box) string {
	glyphs, spaceAfter := prepareGlyphs(chars, clip)
	if len(glyphs) == 0 {
		return ""
	}
	lines := groupLines(glyphs)
	medW, medH := medianSize(glyphs)
	xmin := math.Inf(1)
	for _, g := range glyphs {
		xmin = math.Min(xmin, g.left)
	}
	var b strings.Builder
	prevY := math.NaN()
	for _, ln := range lines {
		rows := splitRows(dedupe(ln.glyphs))
		if !math.IsNaN(prevY) {
			// Blank lines for vertical gaps, as pdftotext prints them: one
			// per extra line height between baselines.
			gap := prevY - ln.y
			for n := int(math.Round(gap/(medH*1.2))) - 1; n > 0 && n < 50; n-- {
				b.WriteByte('\n')
			}
		}
		prevY = ln.y
		for _, row := range rows {
			b.WriteString(renderRow(row, spaceAfter, xmin, medW))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// prepareGlyphs drops control and whitespace characters (remembering which
// content positions were spaces), maps U+0002 to '-' (rule 4) and drops
// glyphs without a usable box.
func prepareGlyphs(chars []glyph, clip box) ([]glyph, map[int]bool) {
	spaceAfter := map[int]bool{}
	out := make([]glyph, 0, len(chars))
	lastKept := -1
	for _, c := range chars {
		if c.r == 2 {
			c.r = '-'
		}
		if unicode.IsSpace(c.r) || c.r == 0 || c.r == 0xFFFE || c.r == 0xFFFF {
			if lastKept >= 0 {
				spaceAfter[lastKept] = true
			}
			continue
		}
		if unicode.IsControl(c.r) || c.height() <= 0 || math.IsNaN(c.x+c.y+c.left+c.right+c.top+c.bottom) {
			continue
		}
		if c.width() <= 0 {
			c.right = c.left + c.height()*0.5
		}
		if !clip.empty() && (c.x > clip.right || c.right < clip.left || c.bottom > clip.top || c.top < clip.bottom) {
			continue
		}
		out = append(out, c)
		lastKept = c.idx
	}
	return out, spaceAfter
}

type line struct {
	y, h   float64 // baseline of the first glyph, smallest glyph height
	glyphs []glyph
}

// sameBaseline is rule 1's test: baselines closer than half the smaller
// glyph height. 0.3–0.4 split label/value pairs set in different fonts.
func sameBaseline(y1, h1, y2, h2 float64) bool {
	return math.Abs(y1-y2) <= 0.5*math.Min(h1, h2)
}

// groupLines applies rule 1 in content order, then merges lines that share
// a baseline but were drawn far apart in the content stream (a right-hand
// column drawn after the left one), and returns them top to bottom.
func groupLines(glyphs []glyph) []*line {
	var lines []*line
	for _, g := range glyphs {
		var target *line
		for i := len(lines) - 1; i >= 0 && i >= len(lines)-3; i-- {
			if sameBaseline(lines[i].y, lines[i].h, g.y, g.height()) {
				target = lines[i]
				break
			}
		}
		if target == nil {
			target = &line{y: g.y, h: g.height()}
			lines = append(lines, target)
		}
		target.glyphs = append(target.glyphs, g)
		target.h = math.Min(target.h, g.height())
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].y > lines[j].y })
	merged := lines[:0]
	for _, ln := range lines {
		if n := len(merged); n > 0 && sameBaseline(merged[n-1].y, merged[n-1].h, ln.y, ln.h) {
			m := merged[n-1]
			m.glyphs = append(m.glyphs, ln.glyphs...)
			m.h = math.Min(m.h, ln.h)
			continue
		}
		merged = append(merged, ln)
	}
	for _, ln := range merged {
		sort.SliceStable(ln.glyphs, func(i, j int) bool { return ln.glyphs[i].left < ln.glyphs[j].left })
	}
	return merged
}

func absInt(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// maxGlyphWidth bounds how far back a scan over x-sorted glyphs must look
// for an overlap.
func maxGlyphWidth(gs []glyph) float64 {
	w := 0.0
	for _, g := range gs {
		w = math.Max(w, g.width())
	}
	return w
}

// dedupe is rule 3: drop a glyph when the same character already sits within
// 0.3 × its width and height and is more than 3 positions away in content
// order (a ligature or kerning pair is never that far apart).
func dedupe(gs []glyph) []glyph {
	maxW := maxGlyphWidth(gs)
	out := make([]glyph, 0, len(gs))
	for _, g := range gs {
		dup := false
		for j := len(out) - 1; j >= 0 && out[j].left >= g.left-maxW; j-- {
			o := out[j]
			if o.r == g.r && math.Abs(o.left-g.left) < 0.3*g.width() &&
				math.Abs(o.y-g.y) < 0.3*g.height() && absInt(o.idx-g.idx) > 3 {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, g)
		}
	}
	return out
}

// splitRows is rule 2: a glyph that overlaps already placed glyphs of the
// row by more than half its width, and is more than 3 positions away from
// them in content order, goes to an extra row after this one (recursively,
// for a third layer). The decision is taken for the glyph's run (glyphs
// drawn one after the other left to right, see runs), placed in content
// order, so an overprinted amount moves as a whole instead of interleaving
// its digits with the text underneath.
func splitRows(gs []glyph) [][]glyph {
	var rows [][]glyph
	for len(gs) > 0 {
		maxW := maxGlyphWidth(gs)
		var placed, rest []glyph // placed stays sorted by left
		for _, run := range runs(gs) {
			if overlapsPlaced(placed, run, maxW) {
				rest = append(rest, run...)
				continue
			}
			for _, g := range run {
				i := sort.Search(len(placed), func(i int) bool { return placed[i].left > g.left })
				placed = append(placed, glyph{})
				copy(placed[i+1:], placed[i:])
				placed[i] = g
			}
		}
		rows = append(rows, placed)
		sort.SliceStable(rest, func(i, j int) bool { return rest[i].left < rest[j].left })
		gs = rest
	}
	return rows
}

func overlapsPlaced(placed, run []glyph, maxW float64) bool {
	for _, g := range run {
		i := sort.Search(len(placed), func(i int) bool { return placed[i].left >= g.right })
		for j := i - 1; j >= 0 && placed[j].left >= g.left-maxW; j-- {
			p := placed[j]
			ov := math.Min(p.right, g.right) - math.Max(p.left, g.left)
			if ov > 0.5*g.width() && absInt(p.idx-g.idx) > 3 {
				return true
			}
		}
	}
	return false
}

// runs splits the glyphs of a row (sorted by x) into runs in content order:
// a run continues while the next glyph in content order starts to the right
// of the previous one, without a column-sized jump.
func runs(gs []glyph) [][]glyph {
	byIdx := make([]glyph, len(gs))
	copy(byIdx, gs)
	sort.SliceStable(byIdx, func(i, j int) bool { return byIdx[i].idx < byIdx[j].idx })
	var out [][]glyph
	start := 0
	for i := 1; i <= len(byIdx); i++ {
		if i < len(byIdx) {
			p, g := byIdx[i-1], byIdx[i]
			if g.left >= p.right-0.5*g.width() && g.left-p.right < 2*g.height() {
				continue
			}
		}
		out = append(out, byIdx[start:i])
		start = i
	}
	return out
}

// medianSize returns the median glyph width and height of a page.
func medianSize(gs []glyph) (w, h float64) {
	ws := make([]float64, len(gs))
	hs := make([]float64, len(gs))
	for i, g := range gs {
		ws[i], hs[i] = g.width(), g.height()
	}
	sort.Float64s(ws)
	sort.Float64s(hs)
	return ws[len(ws)/2], hs[len(hs)/2]
}

// renderRow lays out one row of x-sorted glyphs. The column of a glyph after
// a wide gap is its x position in median character widths from the page's
// left text edge, so columns line up across rows like pdftotext's.
func renderRow(row []glyph, spaceAfter map[int]bool, xmin, medW float64) string {
	var b strings.Builder
	col := 0
	for i, g := range row {
		target := int(math.Round((g.left - xmin) / medW))
		if i == 0 {
			for ; col < target; col++ {
				b.WriteByte(' ')
			}
		} else {
			p := row[i-1]
			gap := g.left - p.right
			switch {
			case gap > 1.5*medW && gap > 1.2*g.width():
				pad := max(target-col, 2)
				b.WriteString(strings.Repeat(" ", pad))
				col += pad
			case wordBreak(p, g, gap, spaceAfter):
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteRune(g.r)
		col++
	}
	return strings.TrimRight(b.String(), " ")
}

// wordBreak reports whether one space separates p and g: pdfium emitted a
// space right after p in content order and g follows p, or the gap is wider
// than a tenth of the glyph height, poppler's minimum word spacing (0.1 ×
// the font size), for text drawn without space characters.
func wordBreak(p, g glyph, gap float64, spaceAfter map[int]bool) bool {
	if spaceAfter[p.idx] && g.idx > p.idx && gap > -0.1*g.height() {
		return true
	}
	return gap > 0.1*math.Min(p.height(), g.height())
}
