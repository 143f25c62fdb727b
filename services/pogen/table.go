package pogen

import (
	"slices"
	"strconv"
	"strings"
)

// gap separates columns; right-aligned cells end gap before the next column
// so that pdftotext -layout keeps them apart.
const gap = 4.5

type column struct {
	key   string
	parts []string // header label, one entry per header line
	right bool
	x, w  float64
}

// renderTable draws the item table, breaking pages between rows with a
// continuation header, an optional repeated column header and the footer.
func (g *gen) renderTable() {
	w, l := g.w, &g.lay
	bodySize := w.size
	cols, row2 := g.planTable()
	g.recordTableFeatures(cols, row2)
	g.valueRight = w.right
	if a := findCol(slices.Concat(cols, row2), "amount"); a != nil {
		g.valueRight = a.x + a.w - gap
	}
	cont := pick(g.r, g.v.contHeader)
	if g.kind != "order" {
		cont = "{title} {id}"
	}
	w.onBreak = func() {
		g.feat("multipage_table")
		w.font("B", 1)
		w.text(w.left, g.fill(cont))
		w.font("", 1)
		w.nl(1.8)
		if l.repeatHeader {
			g.feat("repeated_header")
			g.drawTableHeader(cols, row2)
		}
	}
	g.drawTableHeader(cols, row2)
	for _, it := range g.items {
		g.drawRow(cols, row2, it)
	}
	if l.totalQty == "table" {
		g.drawTableTotal(slices.Concat(cols, row2))
	}
	w.onBreak = func() { w.nl(1) }
	w.setSize(bodySize)
	w.font("", 1)
}

// columnKeys lists the table's columns in print order.
func (g *gen) columnKeys() []string {
	l := &g.lay
	var k []string
	if l.posStyle != "none" {
		k = append(k, "pos")
	}
	if g.r.chance(0.8) {
		k = append(k, "art")
	}
	if l.hsn {
		k = append(k, "hsn")
	}
	k = append(k, "desc")
	if l.lineDates && l.dateFirst {
		k = append(k, "date")
	}
	switch {
	case l.qtyUnitCell:
		k = append(k, "qty")
	case l.unitFirst:
		k = append(k, "unit", "qty")
	default:
		k = append(k, "qty", "unit")
	}
	if !l.noPrices || l.emptyPx {
		k = append(k, "price")
	}
	if l.basis == "column" {
		k = append(k, "per")
	}
	if l.discount {
		k = append(k, "disc")
	}
	if !l.noPrices && !l.noAmounts {
		k = append(k, "amount")
	}
	if l.lineDates && !l.dateFirst {
		k = append(k, "date")
	}
	return k
}

// planTable chooses labels and widths. When the description column gets too
// narrow it shrinks the font, then drops optional columns, then moves the
// numbers to a second row per item.
func (g *gen) planTable() (cols, row2 []*column) {
	w, l := g.w, &g.lay
	l.cols = g.columnKeys()
	labels := map[string]string{}
	for _, k := range l.cols {
		labels[k] = g.colLabel(k)
	}
	for {
		if l.twoRow {
			return g.planTwoRow(labels)
		}
		cols = g.buildColumns(l.cols, labels, w.left)
		if g.descFits(cols) {
			return cols, nil
		}
		switch {
		case w.size > 6.5:
			w.setSize(w.size - 0.5)
		case g.dropColumn():
		default:
			l.twoRow = true
		}
	}
}

// dropColumn removes the first optional column still present.
func (g *gen) dropColumn() bool {
	l := &g.lay
	for _, k := range []string{"date", "hsn", "art"} {
		if i := slices.Index(l.cols, k); i >= 0 {
			l.cols = slices.Delete(l.cols, i, i+1)
			return true
		}
	}
	return false
}

// descFits is true when every description word fits the description column
// (so wrapping never cuts a word and the truth stays the printed text).
func (g *gen) descFits(cols []*column) bool {
	for _, c := range cols {
		if c.key == "desc" {
			return c.w-gap >= max(38, g.longestWord())
		}
	}
	return true
}

func (g *gen) longestWord() float64 {
	m := 0.0
	for _, it := range g.items {
		for _, s := range strings.Fields(it.desc) {
			m = max(m, g.w.width(s)+1)
		}
	}
	return m
}

// planTwoRow puts position, article and description on the first row and
// the numbers on a second row, right-aligned to the margin.
func (g *gen) planTwoRow(labels map[string]string) (cols, row2 []*column) {
	w, l := g.w, &g.lay
	l.headerLines = 1
	var k1, k2 []string
	for _, k := range l.cols {
		if k == "pos" || k == "art" || k == "hsn" || k == "desc" {
			k1 = append(k1, k)
		} else {
			k2 = append(k2, k)
		}
	}
	cols = g.buildColumns(k1, labels, w.left)
	row2 = g.buildColumns(k2, labels, w.left)
	used := 0.0
	for _, c := range row2 {
		used += c.w
	}
	shift := w.right - w.left - used
	for _, c := range row2 {
		c.x += shift
	}
	return cols, row2
}

// buildColumns measures each column from its label and cells; the
// description takes what is left of the width.
func (g *gen) buildColumns(keys []string, labels map[string]string, x float64) []*column {
	w, l := g.w, &g.lay
	var cols []*column
	used := 0.0
	w.font("B", 1)
	for _, k := range keys {
		c := &column{key: k, parts: splitLabel(labels[k], l.headerLines), right: isNumeric(k)}
		for _, p := range c.parts {
			c.w = max(c.w, w.width(p))
		}
		cols = append(cols, c)
	}
	w.font("", 1)
	for _, c := range cols {
		if c.key != "desc" {
			for _, it := range g.items {
				c.w = max(c.w, w.width(g.cell(c.key, it)))
			}
		}
		c.w += gap
		used += c.w
	}
	for _, c := range cols {
		if c.key == "desc" {
			c.w = max(c.w, w.right-w.left-used+c.w)
		}
		c.x = x
		x += c.w
	}
	return cols
}

func isNumeric(key string) bool {
	switch key {
	case "qty", "price", "per", "disc", "amount":
		return true
	}
	return false
}

// splitLabel stacks a label on up to n lines, balancing line lengths.
func splitLabel(label string, n int) []string {
	words := strings.Fields(label)
	if n <= 1 || len(words) < 2 {
		return []string{label}
	}
	if len(words) <= n {
		return words
	}
	target := (len(label) + n - 1) / n
	var out []string
	cur := ""
	for i, wd := range words {
		left := len(words) - i
		if cur != "" && (len(cur)+1+len(wd) > target || left < n-len(out)) && len(out) < n-1 {
			out = append(out, cur)
			cur = wd
			continue
		}
		cur = strings.TrimSpace(cur + " " + wd)
	}
	return append(out, cur)
}

// colLabel draws a column's label; three-line headers prefer long labels,
// and a currency column header appends the code ("Unit Price (USD)").
func (g *gen) colLabel(key string) string {
	r := g.r
	list := g.colLabels(key)
	label := pick(r, list)
	if g.lay.headerLines == 3 {
		for range 2 {
			if c := pick(r, list); len(strings.Fields(c)) > len(strings.Fields(label)) {
				label = c
			}
		}
	}
	if g.curMode == "column_header" && (key == "price" || key == "amount") && !(g.lay.noPrices) {
		label += " (" + g.cur.code + ")"
		g.printed.currency = true
	}
	return label
}

func (g *gen) colLabels(key string) []string {
	v := g.v
	switch key {
	case "pos":
		return v.colPos
	case "art":
		return v.colArt
	case "hsn":
		return en.hsnCols
	case "desc":
		return v.colDesc
	case "date":
		return v.colDate
	case "qty":
		return v.colQty
	case "unit":
		return v.colUnit
	case "price":
		return v.colPrice
	case "per":
		return v.colPer
	case "disc":
		return v.colDisc
	}
	return v.colAmount
}

// cell is the printed text of a column for an item (not the description).
func (g *gen) cell(key string, it *item) string {
	l := &g.lay
	switch key {
	case "pos":
		return it.pos
	case "art":
		return it.art
	case "hsn":
		return it.hsn
	case "date":
		return g.lineDate(it.date)
	case "qty":
		if l.qtyUnitCell {
			return g.num.format(it.qty) + " " + it.unit
		}
		return g.num.format(it.qty)
	case "unit":
		return it.unit
	case "price":
		return g.priceCell(it)
	case "per":
		return g.num.format(dec{it.basis, 0})
	case "disc":
		return g.num.format(it.disc)
	case "amount":
		return g.cellMoney(it.amount)
	}
	return ""
}

func (g *gen) priceCell(it *item) string {
	if g.lay.noPrices {
		return ""
	}
	s := g.cellMoney(it.price)
	if g.lay.basis == "inline" && it.basis != 1 {
		s += "/" + g.num.format(dec{it.basis, 0})
	}
	return s
}

// cellMoney prints a price or amount in a cell, with the currency symbol
// when the document puts symbols in its cells ("$2,760.00").
func (g *gen) cellMoney(d dec) string {
	s := g.num.format(d)
	if !g.symbolInCells {
		return s
	}
	g.printed.currency = true
	if g.lay.symbolAfter {
		return s + " " + g.cur.symbol
	}
	return g.cur.symbol + s
}

func itoa(n int) string { return strconv.Itoa(n) }
