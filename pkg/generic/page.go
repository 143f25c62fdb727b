package generic

import (
	"strings"
	"unicode"
)

// word is one run of non-space characters on a line of the layout text:
// its box on the page's character grid (columns in runes).
type word struct {
	text     string
	col, end int // first column, one past the last
}

// cell is a phrase: words separated by single spaces. Two or more spaces
// end a cell, as pdftotext -layout separates columns and label from value.
type cell struct {
	text     string // the words joined by single spaces
	folded   string // text folded for the vocabularies (see fold)
	col, end int
	words    []word
}

// line is one line of a page.
type line struct {
	page, no int // page (1-based), line on the page (0-based)
	raw      string
	cells    []cell
}

// doc is the document as pages of lines.
type doc struct {
	lines []*line // every line of every page, in reading order
	pages int
}

// parse splits layout text into pages (form feeds), lines and cells.
func parse(text string) *doc {
	d := &doc{}
	pages := strings.Split(text, "\f")
	if n := len(pages); n > 1 && strings.TrimSpace(pages[n-1]) == "" {
		pages = pages[:n-1]
	}
	for p, pg := range pages {
		for i, raw := range strings.Split(pg, "\n") {
			raw = strings.TrimRight(unbox(raw), " \t\r")
			d.lines = append(d.lines, &line{page: p + 1, no: i, raw: raw, cells: cellsOf(raw)})
		}
	}
	d.pages = len(pages)
	return d
}

// cellsOf splits one line into words and cells by runes, so columns stay
// right for accented letters and symbols.
func cellsOf(raw string) []cell {
	var cells []cell
	var cur *cell
	col, gap := 0, 0
	var wb strings.Builder
	wstart := -1
	flush := func() {
		if wstart < 0 {
			return
		}
		w := word{text: wb.String(), col: wstart, end: col}
		wb.Reset()
		wstart = -1
		if cur == nil || gap >= 2 {
			cells = append(cells, cell{col: w.col})
			cur = &cells[len(cells)-1]
		}
		cur.words = append(cur.words, w)
		cur.end = w.end
		gap = 0
	}
	for _, r := range raw {
		if unicode.IsSpace(r) {
			flush()
			gap++
			col++
			continue
		}
		if wstart < 0 {
			wstart = col
		}
		wb.WriteRune(r)
		col++
	}
	flush()
	for i := range cells {
		parts := make([]string, len(cells[i].words))
		for j, w := range cells[i].words {
			parts[j] = w.text
		}
		cells[i].text = strings.Join(parts, " ")
		cells[i].folded = fold(cells[i].text)
	}
	return cells
}

// empty reports whether the line has no text.
func (l *line) empty() bool { return len(l.cells) == 0 }

// at returns the position of a span of the line.
func (l *line) at(col, end int, label string) Position {
	return Position{Page: l.page, Line: l.no, Col: col, Len: end - col, Label: label}
}

// overlaps reports whether [a0,a1) and [b0,b1) share a column, allowing
// slack columns on either side.
func overlaps(a0, a1, b0, b1, slack int) bool {
	return a0 < b1+slack && b0 < a1+slack
}

// boxRunes draw the borders of boxed grids; they are not text.
var boxRunes = strings.NewReplacer("|", " ", "│", " ", "┃", " ", "¦", " ")

// unbox blanks the borders of boxed grids (ASCII or box-drawing), so a
// value inside a box is a cell of its own.
func unbox(raw string) string {
	if strings.Trim(raw, "+-=_|─━┼┬┴├┤┌┐└┘ \t") == "" {
		return ""
	}
	return boxRunes.Replace(raw)
}
