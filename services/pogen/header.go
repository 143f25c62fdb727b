package pogen

import (
	"slices"
	"strings"
)

// renderHeader draws page 1 above the table: copy mark, letterhead, title,
// header fields, parties and notes.
func (g *gen) renderHeader() {
	w, l := g.w, &g.lay
	ids := g.idFields()
	fields := g.headerFields()
	if g.countDates(ids, fields) >= 2 {
		g.feat("multi_dates")
	}
	if l.copyMark != "" || l.barcode {
		g.drawMarks()
	}
	if l.centered {
		g.drawTitleBlock(w.left, w.right, true)
	}
	kv := slices.Concat(ids, fields)
	grid := l.fieldStyle == "grid" || l.fieldStyle == "boxed"
	if grid {
		kv = g.gridSplit(ids)
	}
	g.drawTop(kv)
	if grid {
		g.drawGrid(append(gridIDs(ids), fields...))
	}
	w.nl(0.8)
	g.drawParties()
	g.drawNotes()
	w.nl(0.8)
}

func (g *gen) countDates(lists ...[]field) int {
	n := 0
	for _, fs := range lists {
		for _, f := range fs {
			if f.isDate {
				n++
			}
		}
	}
	return n
}

// gridSplit returns the id fields drawn on their own lines above a grid:
// those whose placement is not label-above.
func (g *gen) gridSplit(ids []field) []field {
	var out []field
	for _, f := range ids {
		if !f.stacked {
			out = append(out, f)
		}
	}
	return out
}

func gridIDs(ids []field) []field {
	var out []field
	for _, f := range ids {
		if f.stacked {
			out = append(out, f)
		}
	}
	return out
}

// drawMarks prints a copy mark and/or a barcode text at the top right.
func (g *gen) drawMarks() {
	w, l := g.w, &g.lay
	w.font("B", 1.1)
	if l.copyMark != "" {
		g.feat("copy_mark")
		w.textR(w.right, l.copyMark)
	}
	if l.barcode {
		g.feat("barcode_text", "id_repeated")
		w.font("", 1)
		w.text(w.left+(w.right-w.left)*0.45, "*"+g.orderID+"*")
	}
	w.font("", 1)
	w.nl(1.5)
}

// titleText is the title as printed, with the number when it sits in the
// title line ("PURCHASE ORDER    4500012345").
func (g *gen) titleText() string {
	t := g.lay.title
	if g.lay.spacedTitle {
		g.feat("spaced_title")
		t = strings.Join(strings.Split(t, ""), " ")
	}
	if g.lay.idPlace == "title_number" {
		g.feat("title_number")
		t += "    " + g.orderID
	}
	return t
}

// drawTitleBlock draws the title (and the number under it) between x1 and
// x2, centred or right-aligned.
func (g *gen) drawTitleBlock(x1, x2 float64, centre bool) {
	w := g.w
	scale := 1.5 + float64(g.r.IntN(4))*0.2
	w.font("B", scale)
	w.nl(scale*0.5 - 0.3)
	t := g.titleText()
	if centre {
		w.textC(x1, x2, t)
	} else {
		w.textR(x2, t)
	}
	w.nl(scale * 0.75)
	if g.lay.idPlace == "under_title" {
		g.feat("number_under_title")
		w.font("B", 1.2)
		if centre {
			w.textC(x1, x2, g.orderID)
		} else {
			w.textR(x2, g.orderID)
		}
		w.nl(1.4)
	}
	w.font("", 1)
}

// drawTop draws the letterhead on the left and, on the right, the title
// (unless centred above) and the same-line fields.
func (g *gen) drawTop(kv []field) {
	w, l := g.w, &g.lay
	y0 := w.y
	leftW := 0.0
	if l.letterhead {
		leftW = g.drawLetterhead()
	}
	yL := w.y
	w.y = y0
	rightX := max(w.left+leftW+10, w.left+(w.right-w.left)*0.5)
	if !l.centered {
		g.drawTitleBlock(rightX, w.right, false)
	}
	kvW := g.kvWidth(kv)
	switch {
	case l.fieldStyle == "kv2" || kvW > w.right-rightX:
		w.y = max(w.y, yL) + w.lh*0.5
		g.drawKV2(kv)
	default:
		g.drawKV(max(rightX, w.right-kvW-2), kv)
	}
	w.y = max(w.y, yL)
}

// drawLetterhead prints the buyer (or, on negatives, the seller) and
// returns the block's width.
func (g *gen) drawLetterhead() float64 {
	w := g.w
	p := g.buyer
	if g.kind != "order" {
		p = g.vendor
	}
	w.font("B", 1.25)
	width := w.width(p.name)
	w.text(w.left, p.name)
	w.nl(1.3)
	w.font("", 1)
	lines := append([]string{}, p.lines...)
	if g.r.chance(0.5) {
		lines = append(lines, "purchasing@"+domain(p.name))
	}
	for _, s := range lines {
		width = max(width, w.width(s))
		w.text(w.left, s)
		w.nl(1)
	}
	return width
}

func (g *gen) kvWidth(fs []field) float64 {
	if g.lay.tabular {
		lw, vw := 0.0, 0.0
		for _, f := range fs {
			lw = max(lw, g.w.width(g.labelText(f.label)))
			vw = max(vw, g.w.width(f.value))
		}
		return lw + vw + 3
	}
	wd := 0.0
	for _, f := range fs {
		wd = max(wd, g.fieldWidth(f))
	}
	return wd
}

// drawKV draws fields one per line from x: tabular (values aligned in a
// column) or inline ("Label: value").
func (g *gen) drawKV(x float64, fs []field) {
	w := g.w
	labelW := 0.0
	for _, f := range fs {
		labelW = max(labelW, w.width(g.labelText(f.label)))
	}
	for _, f := range fs {
		switch {
		case f.glued:
			w.text(x, f.label+f.value)
		case f.stacked:
			w.font("B", 1)
			w.text(x, f.label)
			w.font("", 1)
			w.nl(1)
			w.text(x, f.value)
		case g.lay.tabular:
			w.text(x, strings.TrimRight(g.labelText(f.label), " "))
			w.text(x+labelW+3, f.value)
		default:
			w.text(x, g.labelText(f.label)+f.value)
		}
		w.nl(1)
	}
}

// drawKV2 draws fields in two columns across the page.
func (g *gen) drawKV2(fs []field) {
	w := g.w
	half := (len(fs) + 1) / 2
	y0 := w.y
	g.drawKV(w.left, fs[:half])
	yL := w.y
	w.y = y0
	g.drawKV(w.left+(w.right-w.left)*0.5, fs[half:])
	w.y = max(w.y, yL)
}

// drawGrid draws fields as cells with the label above the value, in rows
// that fill the width; boxed grids draw the cell borders.
func (g *gen) drawGrid(fs []field) {
	w, l := g.w, &g.lay
	if l.fieldStyle == "boxed" {
		g.feat("boxed_grid")
	} else {
		g.feat("grid_fields")
	}
	w.nl(0.6)
	for len(fs) > 0 {
		n, widths := g.gridRow(fs)
		g.drawGridRow(fs[:n], widths)
		fs = fs[n:]
	}
}

// gridRow returns how many fields fit in the next row and their widths,
// stretched to the full width.
func (g *gen) gridRow(fs []field) (int, []float64) {
	w := g.w
	avail := w.right - w.left
	var widths []float64
	used := 0.0
	for _, f := range fs {
		cw := max(28, max(w.width(f.label), w.width(f.value))+6)
		if len(widths) > 0 && (used+cw > avail || len(widths) == 5) {
			break
		}
		widths = append(widths, cw)
		used += cw
	}
	for i := range widths {
		widths[i] += (avail - used) / float64(len(widths))
	}
	return len(widths), widths
}

func (g *gen) drawGridRow(fs []field, widths []float64) {
	w := g.w
	x := w.left
	for i, f := range fs {
		if g.lay.fieldStyle == "boxed" {
			w.box(x, x+widths[i], 2)
		}
		w.font("B", 0.9)
		w.text(x+1.5, f.label)
		w.font("", 1)
		w.y += w.lh
		w.text(x+1.5, f.value)
		w.y -= w.lh
		x += widths[i]
	}
	w.nl(2.4)
}
