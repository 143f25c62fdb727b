package generic

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
)

// row is one item as read, with where each value came from.
type row struct {
	item   order.Item
	at     map[string]Position // canonical field → position
	desc   []string
	prices bool // a price was printed
	first  int  // line index of the row's numbers
	// qtyText is the quantity as printed.
	qtyText string
	// unplaced names a column of unknown meaning that prints a number on
	// the row: it might be the price or the amount, so the row is unproven.
	unplaced string
}

// pageMarker is page furniture inside a table.
var pageMarker = regexp.MustCompile(`(?i)^(?:page|seite|pagina|página|pag\.?)\s*\d+\s*(?:of|/|von|de|di|sur|van)?\s*\d*$|^(?:continued|carry\s+over|suite|fortsetzung|übertrag)\b`)

// numericKinds are the columns that hold numbers.
var numericKinds = map[colKind]bool{colQty: true, colPrice: true, colPer: true, colAmount: true, colDisc: true}

// columnOf returns the header column a word belongs to: the one it
// overlaps most, else for a number the nearest column when it is close
// (numbers are right-aligned and may stick out of a left-aligned header),
// else the nearest text column: a number far from every numeric column is
// text (a size in a description, "400 ml"), never a quantity or price.
func columnOf(h *header, w word, numeric bool) int {
	best, bestOv := -1, 0
	for i, c := range h.cols {
		if ov := min(w.end, c.end+1) - max(w.col, c.col-1); ov > bestOv {
			best, bestOv = i, ov
		}
	}
	if best >= 0 {
		return best
	}
	near, nearGap := nearest(h, w, func(column) bool { return true })
	if numeric && near >= 0 && nearGap <= 6 {
		return near
	}
	text, _ := nearest(h, w, func(c column) bool { return !numericKinds[c.kind] })
	return text
}

// nearest is the column closest to w among those ok accepts, and the gap.
func nearest(h *header, w word, ok func(column) bool) (int, int) {
	best, bestGap := -1, 1<<30
	for i, c := range h.cols {
		if !ok(c) {
			continue
		}
		if g := max(c.col-w.end, w.col-c.end); g < bestGap {
			best, bestGap = i, g
		}
	}
	return best, bestGap
}

func overlapsAny(h *header, w word) bool {
	for _, c := range h.cols {
		if min(w.end, c.end+1)-max(w.col, c.col-1) > 0 {
			return true
		}
	}
	return false
}

// cellsByColumn groups the words of a line by the header's columns
// (-1: no column).
func (r *reader) cellsByColumn(h *header, l *line) map[int][]word {
	out := map[int][]word{}
	for _, c := range l.cells {
		first := -1
		for i, w := range c.words {
			_, numeric := r.cv.amount(w.text)
			k := columnOf(h, w, numeric && i == 0)
			if i == 0 {
				first = k
			} else if !overlapsAny(h, w) {
				// A word glued to text by one space ("gris clair 400")
				// belongs where its cell begins.
				k = first
			}
			out[k] = append(out[k], w)
		}
	}
	return out
}

// readRows reads the item rows under a header until a totals line, the
// end of the table's pages or a line that ends the table.
func (r *reader) readRows(h *header) ([]*row, int, error) {
	t := &tableRead{}
	i := h.last + 1
	for ; i < len(r.d.lines); i++ {
		if err := r.ctx.Err(); err != nil {
			return nil, i, err
		}
		l := r.d.lines[i]
		if l.page != r.d.lines[h.last].page {
			next := r.findHeader(i, l.page)
			if next == nil || !sameHeader(h, next) {
				next = r.headerlessPage(h, i)
			}
			if next == nil {
				break // the table does not go on on this page
			}
			i, h = next.last, next
			continue
		}
		if l.empty() || pageMarker.MatchString(strings.TrimSpace(l.raw)) || pageFooter.MatchString(l.raw) {
			continue
		}
		end, err := r.readLine(h, t, l, i)
		if err != nil || end {
			return t.rows, i, err
		}
	}
	return t.rows, i, nil
}

// tableRead is the state of readRows: the rows so far, description lines
// before the first row, and the last text line when it starts with a
// position (a record whose numbers are on the next line).
type tableRead struct {
	rows    []*row
	pending []string
	lead    *leadLine
}

// leadLine is a text line that starts with a position: the first line of
// a two-line record ("0010  Pneumatic fitting" over its numbers).
type leadLine struct {
	pos, desc string
	owner     *row // the row whose description took the line, if any
}

// readLine reads one line of the table; end is set at a totals line.
func (r *reader) readLine(h *header, t *tableRead, l *line, i int) (end bool, err error) {
	words := r.cellsByColumn(h, l)
	rw := r.rowOf(h, l, i, words, false)
	if rw == nil && t.lead != nil {
		if rw = r.rowOf(h, l, i, words, true); rw != nil {
			t.takeLead(rw)
		}
	}
	// A line printing a quantity, a price and an amount is an item even
	// when its description starts like a total ("Transport box");
	// anything else with a totals label ends the table.
	if (rw == nil || rw.item.UnitPrice == "" || rw.item.LineAmount == "") && r.totalsLine(h, l) {
		return true, nil
	}
	if rw != nil {
		rw.desc = append(t.pending, rw.desc...)
		t.pending, t.lead = nil, nil
		t.rows = append(t.rows, rw)
		return false, nil
	}
	if k := h.index(colAmount); k >= 0 && len(words[k]) > 0 && len(l.cells) > 1 {
		if _, v := r.lastAmount(words[k]); v != "" {
			return false, reject(document.ReasonCannotParseItems, "page %d line %d prints an amount under %q but no quantity the reader can read",
				l.page, l.no+1, h.cols[k].text)
		}
	}
	t.text(l)
	return false, nil
}

// text files a line without numbers: the description of the last row (or
// of the first row to come), and a possible lead of a two-line record.
func (t *tableRead) text(l *line) {
	text := strings.TrimSpace(l.raw)
	var owner *row
	if len(t.rows) == 0 {
		t.pending = append(t.pending, text)
	} else {
		owner = t.rows[len(t.rows)-1]
		owner.desc = append(owner.desc, text)
	}
	t.lead = nil
	if first := l.cells[0]; len(first.words) > 0 && positionRE.MatchString(first.words[0].text) {
		rest := strings.TrimSpace(strings.TrimPrefix(text, first.words[0].text))
		t.lead = &leadLine{pos: first.words[0].text, desc: rest, owner: owner}
	}
}

// takeLead gives a numbers-only row the position and description of the
// line above it, taken back from the row that had filed it as its own.
func (t *tableRead) takeLead(rw *row) {
	rw.item.Position = t.lead.pos
	rw.desc = append([]string{t.lead.desc}, rw.desc...)
	if o := t.lead.owner; o != nil && len(o.desc) > 0 {
		o.desc = o.desc[:len(o.desc)-1]
	} else if len(t.pending) > 0 {
		t.pending = t.pending[:len(t.pending)-1]
	}
}

// pageFooter is a page count at the end of a line ("ACME Inc.   Page 1
// of 2").
var pageFooter = regexp.MustCompile(`(?i)(?:page|seite|pagina|página|pag\.?|blatt|pagg?\.)\s*\d+(?:\s*(?:of|/|von|de|di|sur|van)\s*\d+|\s*\(\d+\))?\s*$`)

// headerlessPage fits the table's columns to a page that goes on without
// repeating the header: its first line with one cell per column that has
// the shape of an item (looksLikeRow) gives each column its place on this
// page (the header's columns, in order). The header returned ends on the
// line before it, so that line is read as a row.
func (r *reader) headerlessPage(h *header, from int) *header {
	page := r.d.lines[from].page
	for i := from; i < len(r.d.lines) && r.d.lines[i].page == page; i++ {
		l := r.d.lines[i]
		if len(l.cells) != len(h.cols) || !r.looksLikeRow(l) {
			continue
		}
		cols := make([]column, len(h.cols))
		for k, c := range l.cells {
			cols[k] = column{kind: h.cols[k].kind, text: h.cols[k].text, col: c.col, end: c.end}
		}
		return &header{first: i - 1, last: i - 1, cols: cols}
	}
	return nil
}

// rowOf reads a line as the start of an item: it must print a quantity
// in the quantity column.
func (r *reader) rowOf(h *header, l *line, i int, words map[int][]word, noPos bool) *row {
	rw := &row{at: map[string]Position{}, first: i}
	var qtyWord *word
	for _, k := range columnsInOrder(words) {
		ws := words[k]
		if k < 0 {
			continue
		}
		c := h.cols[k]
		ws = byDistance(r.groupSpaced(ws), c)
		if numericKinds[c.kind] && r.numbers(ws) > 1 {
			rw.unplaced = c.text + "\" (two numbers under one column)"
		}
		switch c.kind {
		case colQty:
			if w, v, unit := r.qtyOf(ws); v != "" {
				rw.item.Quantity, rw.qtyText, qtyWord = v, w.text, &w
				rw.at["quantity"] = l.at(w.col, w.end, c.text)
				if unit != "" {
					rw.item.Unit = unit
				}
			}
		case colPrice:
			if w, v, basis := r.priceOf(ws); v != "" {
				rw.item.UnitPrice, rw.prices = v, true
				if basis != "" { // "4,250.00/1,000"; else a basis column may say
					rw.item.PriceBasisQuantity = basis
				}
				rw.at["unit_price"] = l.at(w.col, w.end, c.text)
			}
		case colAmount:
			if w, v := r.lastAmount(ws); v != "" {
				rw.item.LineAmount = v
				rw.at["line_amount"] = l.at(w.col, w.end, c.text)
			}
		case colPer:
			if _, v := r.lastAmount(ws); v != "" {
				rw.item.PriceBasisQuantity = v
			}
		case colDisc:
			if w, v := r.lastAmount(trimPercent(ws)); v != "" {
				rw.item.DiscountPercent = v
				rw.at["discount_percent"] = l.at(w.col, w.end, c.text)
			}
		case colUnit:
			if rw.item.Unit == "" && len(ws) > 0 {
				rw.item.Unit = strings.Trim(ws[0].text, "/")
			}
		case colOther:
			if _, v := r.lastAmount(ws); v != "" {
				rw.unplaced = c.text + "\" (a column of unknown meaning)"
			}
		}
	}
	if qtyWord == nil {
		return nil
	}
	if k := r.strayNumber(h, l); k != "" {
		rw.unplaced = k
	}
	// Under a position column an item starts with its position; a line
	// with other text there (a signature block, a note) is not an item.
	if k := h.index(colPos); k >= 0 && !positionRE.MatchString(joinWords(words[k])) && !(noPos && len(words[k]) == 0) {
		return nil
	}
	// Where the table has money columns an item prints money: a lone
	// number under the quantity is a wrapped description ("250 bar").
	if (h.has(colAmount) && rw.item.LineAmount == "" && rw.item.UnitPrice == "") ||
		(!h.has(colAmount) && h.has(colPrice) && rw.item.UnitPrice == "" && !r.noPriceRows) {
		return nil
	}
	r.describe(h, rw, words)
	return rw
}

// describe fills the row's position, article and description from the
// text columns.
func (r *reader) describe(h *header, rw *row, words map[int][]word) {
	for _, k := range columnsInOrder(words) {
		ws := words[k]
		text := joinWords(ws)
		if k < 0 {
			rw.desc = append(rw.desc, text)
			continue
		}
		switch h.cols[k].kind {
		case colPos:
			rw.item.Position = text
		case colArticle:
			rw.item.BuyerArticleID = text
		case colDesc, colOther:
			if h.cols[k].kind == colDesc || rw.item.Description == "" {
				rw.desc = append(rw.desc, text)
			}
		}
	}
}

// groupSpaced joins the words of a number grouped by spaces ("2 400",
// "36 640,00") into one word.
func (r *reader) groupSpaced(ws []word) []word {
	var out []word
	for i := 0; i < len(ws); i++ {
		j := i + 1
		for j < len(ws) && ws[j].col-ws[j-1].end == 1 && spaceGrouped.MatchString(joinWords(ws[i:j+1])) {
			j++
		}
		if j > i+1 {
			out = append(out, word{text: strings.ReplaceAll(joinWords(ws[i:j]), " ", ""), col: ws[i].col, end: ws[j-1].end})
			i = j - 1
			continue
		}
		out = append(out, ws[i])
	}
	return out
}

// strayNumber names a number standing alone right of the quantity
// column but under a column that holds no numbers (a price the header
// did not name): the row cannot be proven.
func (r *reader) strayNumber(h *header, l *line) string {
	q := h.index(colQty)
	if q < 0 {
		return ""
	}
	for _, c := range l.cells {
		w := c.words[0]
		if _, ok := r.cv.amount(w.text); !ok || w.col <= h.cols[q].col {
			continue
		}
		k := columnOf(h, w, true)
		if k < 0 {
			continue
		}
		switch k := h.cols[k].kind; k {
		case colDesc, colArticle, colPos, colOther, colUnit:
			return w.text + "\" right of the quantity, under " + k.String()
		}
	}
	return ""
}

// gluedUnit is a quantity with its unit glued to it ("1m", "12pcs").
var gluedUnit = regexp.MustCompile(`^(\d[\d.,']*)(\pL{1,5}\.?)$`)

// positionRE is a line position as printed: 1, 10, 0010, 1.1, 2), A-1.
var positionRE = regexp.MustCompile(`^(?:[A-Z]-?)?\d{1,6}(?:[.]\d{1,3})?[.)]?$`)

// numbers counts the words that are numbers ("480 EA" is one).
func (r *reader) numbers(ws []word) int {
	n := 0
	for _, w := range ws {
		if _, ok := r.cv.amount(strings.TrimSuffix(w.text, "%")); ok {
			n++
		}
	}
	return n
}

// columnsInOrder returns the keys of a line's columns left to right (-1,
// words under no column, first), so a reading never depends on map order.
func columnsInOrder(words map[int][]word) []int {
	keys := make([]int, 0, len(words))
	for k := range words {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

// byDistance orders a column's words by their distance from the header
// (a number stuck to a description, "taille 9", comes last).
func byDistance(ws []word, c column) []word {
	out := slices.Clone(ws)
	sort.SliceStable(out, func(a, b int) bool { return gap(out[a], c) < gap(out[b], c) })
	return out
}

func gap(w word, c column) int { return max(0, c.col-w.end, w.col-c.end) }

func joinWords(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

// qtyOf reads the quantity column's words: a number, and a unit glued to
// it or beside it ("480 EA", "450/EA", "2 No.").
func (r *reader) qtyOf(ws []word) (word, string, string) {
	for i, w := range ws {
		text := w.text
		unit := ""
		if a, b, ok := strings.Cut(text, "/"); ok && letters(b) {
			text, unit = a, b
		} else if m := gluedUnit.FindStringSubmatch(text); m != nil {
			text, unit = m[1], m[2] // "1m", "12pcs"
		}
		v, ok := r.cv.amount(text)
		if !ok || strings.HasPrefix(v, "-") {
			continue
		}
		if unit == "" && i+1 < len(ws) && letters(ws[i+1].text) {
			unit = strings.TrimSuffix(ws[i+1].text, ".")
		}
		return w, v, unit
	}
	return word{}, "", ""
}

// priceOf reads the price column: a number, with a basis after a slash
// ("4,250.00/1,000") or a unit ("3.95/Ea").
func (r *reader) priceOf(ws []word) (word, string, string) {
	for _, w := range ws {
		text, basis := w.text, ""
		if a, b, ok := strings.Cut(text, "/"); ok {
			text = a
			if bv, ok := r.cv.amount(b); ok {
				basis = bv
			}
		}
		if v, ok := r.cv.amount(text); ok {
			return w, v, basis
		}
	}
	return word{}, "", ""
}

// lastAmount is the last number among the words (an amount column may
// print a currency before it; a number grouped by spaces, "36 640,00",
// spans several words).
func (r *reader) lastAmount(ws []word) (word, string) {
	ws = r.groupSpaced(ws)
	for i := len(ws) - 1; i >= 0; i-- {
		if v, ok := r.cv.amount(ws[i].text); ok {
			return ws[i], v
		}
	}
	return word{}, ""
}

func trimPercent(ws []word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		w.text = strings.TrimSuffix(w.text, "%")
		if w.text != "" {
			out = append(out, w)
		}
	}
	return out
}

func letters(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '\'') {
			return false
		}
	}
	return true
}

// complete reports what a row lacks that its table prints: a price under
// a price column, an amount under an amount column, a number under a
// column of unknown meaning ("" when it lacks nothing).
func (r *reader) complete(h *header, rw *row) string {
	switch {
	case rw.unplaced != "":
		return fmt.Sprintf("prints a number the reader cannot place under \"%s", rw.unplaced)
	case h.has(colPrice) && rw.item.UnitPrice == "" && !r.noPriceRows:
		return "prints no price under the price column"
	case h.has(colAmount) && rw.item.LineAmount == "":
		return "prints no amount under the amount column"
	}
	return ""
}

// checkRow verifies a row's arithmetic where it prints the numbers:
// quantity × price ÷ basis × (1 − discount) = line amount. A price that
// closes only per 100 or per 1,000 gets that basis.
func checkRow(rw *row) error {
	it := &rw.item
	q, p, a := order.Rat(it.Quantity), order.Rat(it.UnitPrice), order.Rat(it.LineAmount)
	if q == nil || p == nil || a == nil {
		return nil
	}
	tol := big.NewRat(1, 100)
	bases := []string{it.PriceBasisQuantity}
	if it.PriceBasisQuantity == "" {
		bases = []string{"", "100", "1000"}
	}
	for _, b := range bases {
		if closeTo(lineValue(q, p, order.Rat(b), order.Rat(it.DiscountPercent)), a, tol) {
			it.PriceBasisQuantity = b
			return nil
		}
	}
	return fmt.Errorf("%s × %s does not make the printed %s", it.Quantity, it.UnitPrice, it.LineAmount)
}

// lineValue is q × p ÷ basis × (1 − discount/100).
func lineValue(q, p, basis, disc *big.Rat) *big.Rat {
	v := new(big.Rat).Mul(q, p)
	if basis != nil && basis.Sign() > 0 {
		v.Quo(v, basis)
	}
	if disc != nil {
		f := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(disc, big.NewRat(100, 1)))
		v.Mul(v, f)
	}
	return v
}
