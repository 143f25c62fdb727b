package pogen

import (
	"strings"
)

// drawTableHeader draws the column labels, stacked over the header lines
// (bottom-, top- or middle-aligned like real ERP forms), then a rule.
func (g *gen) drawTableHeader(cols, row2 []*column) {
	w, l := g.w, &g.lay
	h := l.headerLines
	w.ensure(float64(h) + 3)
	w.font("B", 1)
	for line := range h {
		for _, c := range cols {
			off := 0
			switch l.headerAlign {
			case "bottom":
				off = h - len(c.parts)
			case "middle":
				off = (h - len(c.parts)) / 2
			}
			if i := line - off; i >= 0 && i < len(c.parts) {
				g.drawCell(c, c.parts[i])
			}
		}
		w.nl(1)
	}
	if len(row2) > 0 {
		for _, c := range row2 {
			g.drawCell(c, c.parts[0])
		}
		w.nl(1)
	}
	w.font("", 1)
	w.y -= w.lh * 0.6
	w.rule(w.left, w.right)
	w.nl(1.6)
}

// drawCell draws text in a column, left- or right-aligned.
func (g *gen) drawCell(c *column, s string) {
	if c.right {
		g.w.textR(c.x+c.w-gap, s)
	} else {
		g.w.text(c.x, s)
	}
}

// drawRow draws one item: the description wrapped in its column, the other
// cells on its first (or middle) line or on a second row, then sub-rows.
// Rows are never split; a row that does not fit starts a new page.
func (g *gen) drawRow(cols, row2 []*column, it *item) {
	w, l := g.w, &g.lay
	desc := findCol(cols, "desc")
	lines := w.wrap(it.desc, desc.w-gap)
	numLine := 0
	if l.numbersMiddle && len(row2) == 0 && len(it.segs) >= 3 {
		// name, spec and attribute on lines of their own, the numbers beside
		// the middle one: the description runs above and below the row line
		g.feat("numbers_middle_line")
		lines = nil
		for _, s := range it.segs {
			lines = append(lines, w.wrap(s, desc.w-gap)...)
		}
		numLine = 1
	} else if len(lines) > 1 {
		g.feat("wrapped_rows")
	}
	subs := g.subRows(it, desc.w-gap)
	height := float64(len(lines) + len(subs))
	if len(row2) > 0 {
		height++
	}
	g.ensureRow(height)
	for i, s := range lines {
		w.text(desc.x, s)
		if i == numLine {
			g.drawCells(cols, it)
		}
		w.nl(1)
	}
	if len(row2) > 0 {
		g.drawCells(row2, it)
		w.nl(1)
	}
	for _, s := range subs {
		w.text(desc.x+2, s)
		w.nl(1)
	}
	if l.rules {
		w.y -= w.lh
		w.rule(w.left, w.right)
		w.nl(1.3)
	}
}

// ensureRow breaks the page before a row that does not fit, leaving a
// "Continued" line when the layout prints one.
func (g *gen) ensureRow(lines float64) {
	w := g.w
	if w.fits(lines + 1) {
		return
	}
	if g.lay.continued {
		g.feat("continued_marker")
		w.nl(0.5)
		w.text(w.left, pick(g.r, g.v.continued))
	}
	w.breakPage()
}

func (g *gen) drawCells(cols []*column, it *item) {
	for _, c := range cols {
		if c.key != "desc" {
			g.drawCell(c, g.cell(c.key, it))
		}
	}
}

func findCol(cols []*column, key string) *column {
	for _, c := range cols {
		if c.key == key {
			return c
		}
	}
	return nil
}

// subRows are the lines under an item: material reference, spec text and
// delivery schedule lines.
func (g *gen) subRows(it *item, width float64) []string {
	var out []string
	add := func(s string) { out = append(out, g.w.wrap(s, width-2)...) }
	if it.ref != "" {
		g.feat("subrow_reference")
		add(it.ref)
	}
	if len(it.spec) > 0 {
		g.feat("subrow_spec")
		for _, s := range it.spec {
			add(s)
		}
	}
	if len(it.sched) > 0 {
		g.feat("subrow_schedule")
		for i, s := range it.sched {
			add(strings.NewReplacer("{n}", itoa(i+1), "{date}", g.lineDate(s.date), "{qty}", g.num.format(s.qty), "{unit}", it.unit).Replace(g.lay.schedTmpl))
		}
	}
	return out
}

// drawTableTotal draws a total row under the table summing quantities (and
// the amounts, which makes it the printed net).
func (g *gen) drawTableTotal(cols []*column) {
	w := g.w
	g.ensureRow(3)
	w.y -= w.lh * 0.6
	w.rule(w.left, w.right)
	w.nl(1.1)
	w.font("B", 1)
	if d := findCol(cols, "desc"); d != nil {
		w.text(d.x, pick(g.r, g.v.total))
	}
	if q := findCol(cols, "qty"); q != nil {
		g.drawCell(q, g.num.format(g.totalQty))
		g.printed.totalQty = true
		g.feat("total_quantity", "table_total_row")
	}
	if a := findCol(cols, "amount"); a != nil {
		g.drawCell(a, g.totNum.format(g.net))
		g.printed.net = true
	}
	w.font("", 1)
	w.nl(1.5)
}

// recordTableFeatures names the table's traits once its columns are final.
func (g *gen) recordTableFeatures(cols, row2 []*column) {
	l := &g.lay
	maxParts := 1
	for _, c := range cols {
		maxParts = max(maxParts, len(c.parts))
	}
	switch {
	case len(row2) > 0:
		g.feat("two_row_header")
	case maxParts == 1:
		g.feat("header_1_line")
	default:
		g.feat("stacked_header_" + itoa(maxParts))
	}
	g.feat("positions_" + l.posStyle)
	g.recordColumnFeatures()
}

func (g *gen) recordColumnFeatures() {
	l := &g.lay
	has := func(k, f string) {
		if l.has(k) {
			g.feat(f)
		}
	}
	has("date", "line_delivery_dates")
	has("hsn", "hsn_column")
	has("disc", "discount")
	has("per", "price_basis_column")
	if l.qtyUnitCell {
		g.feat("qty_unit_cell")
	}
	if l.unitFirst && l.has("unit") {
		g.feat("unit_before_qty")
	}
	switch {
	case l.noPrices:
		g.feat("no_prices")
		if l.emptyPx {
			g.feat("empty_price_column")
		}
	case l.noAmounts:
		g.feat("no_line_amounts")
	}
	for _, it := range g.items {
		g.itemFeatures(it)
	}
}

func (g *gen) itemFeatures(it *item) {
	l := &g.lay
	if l.noPrices {
		return
	}
	switch {
	case it.basis == 100:
		g.feat("price_basis_100")
	case it.basis == 1000:
		g.feat("price_basis_1000")
	}
	if it.basis != 1 && l.basis == "inline" {
		g.feat("price_basis_inline")
	}
	if !it.disc.isZero() {
		g.feat("discount_nonzero")
	}
	if it.qty.u < 0 {
		g.feat("negative_amounts")
	}
}
