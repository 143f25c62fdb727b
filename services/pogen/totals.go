package pogen

import (
	"fmt"
	"strings"
)

type totRow struct {
	label, value string
	bold         bool
}

// renderTotals draws the totals block right-aligned under the amount
// column: total quantity, net, tax rows, charges, gross, amount in words.
// It moves to a new page when it does not fit, as totals do on real POs.
func (g *gen) renderTotals() {
	w, l := g.w, &g.lay
	rows := g.totalRows()
	if len(rows) == 0 {
		return
	}
	if w.ensure(float64(len(rows)) + 2) {
		g.feat("totals_next_page")
	}
	w.nl(0.6)
	valueW := 0.0
	for _, r := range rows {
		valueW = max(valueW, w.width(r.value))
	}
	xr := g.valueRight
	for _, r := range rows {
		style := ""
		if r.bold {
			style = "B"
		}
		w.font(style, 1)
		w.textR(xr-valueW-6, r.label)
		w.textR(xr, r.value)
		w.nl(1)
	}
	w.font("", 1)
	if l.words {
		g.drawWords()
	}
}

// totalRows lists what the totals block prints and marks it as printed.
func (g *gen) totalRows() []totRow {
	r, v, l, p := g.r, g.v, &g.lay, &g.printed
	var rows []totRow
	if l.totalQty == "row" {
		rows = append(rows, totRow{label: pick(r, v.totalQty), value: g.num.format(g.totalQty)})
		p.totalQty = true
		g.feat("total_quantity")
	}
	switch l.totals {
	case "none":
		return rows
	case "total":
		p.gross = true
		return append(rows, totRow{pick(r, v.total), g.moneyText(g.gross), true})
	case "net":
		p.net = true
		return append(rows, totRow{label: pick(r, v.netOnly), value: g.moneyText(g.net)})
	}
	if !p.net || g.r.chance(0.5) {
		rows = append(rows, totRow{label: pick(r, v.subtotal), value: g.moneyText(g.net)})
		p.net = true
	}
	for _, t := range g.taxRows {
		rows = append(rows, totRow{label: t.label, value: g.moneyText(t.amount)})
		p.tax = true
	}
	if strings.Contains(l.totals, "charges") {
		g.feat("charges")
		labels := v.freight
		if g.reg.name == "in" {
			labels = []string{"Packing & Forwarding", "Freight", "Transport Charges"}
		}
		rows = append(rows, totRow{label: pick(r, labels), value: g.moneyText(g.charges)})
		p.charges = true
	}
	p.gross = true
	return append(rows, totRow{pick(r, v.total), g.moneyText(g.gross), true})
}

// moneyText prints a total with the document's currency presentation.
func (g *gen) moneyText(d dec) string {
	s := g.totNum.format(d)
	l := &g.lay
	switch g.curMode {
	case "code_amounts":
		g.printed.currency = true
		if l.codeAfter {
			return s + " " + g.cur.code
		}
		return g.cur.code + " " + s
	case "symbol":
		g.printed.currency = true
		switch {
		case l.symbolAfter:
			return s + " " + g.cur.symbol
		case l.codeAfter: // reused as "spaced": "$ 1,480.00"
			return g.cur.symbol + " " + s
		}
		return g.cur.symbol + s
	}
	return s
}

// drawWords draws the gross amount in English words, Indian style
// (lakh/crore, "Only") for rupees.
func (g *gen) drawWords() {
	w := g.w
	g.feat("amount_in_words")
	g.printed.currency = true
	u := g.gross.u
	if u < 0 {
		u = -u
	}
	whole, cents := u/100, u%100
	indian := g.cur.code == "INR"
	text := words(whole, indian)
	switch g.cur.code {
	case "INR":
		text = "Rupees " + text
		if cents > 0 {
			text += " and Paise " + words(cents, true)
		}
		text += " Only"
	case "USD":
		text = "US Dollars " + text + fmt.Sprintf(" and %02d/100", cents)
	case "CAD":
		text = "Canadian Dollars " + text + fmt.Sprintf(" and %02d/100", cents)
	case "GBP":
		text = "Pounds Sterling " + text + fmt.Sprintf(" and %d Pence", cents)
	default:
		text = g.cur.code + " " + text + fmt.Sprintf(" and %02d Cents", cents)
	}
	labels := g.v.amountWords
	if !indian {
		labels = labels[:3]
	}
	w.nl(0.5)
	for _, s := range w.wrap(pick(g.r, labels)+" "+text, w.right-w.left) {
		w.ensure(1)
		w.text(w.left, s)
		w.nl(1)
	}
}

// renderClosing draws the signature and the terms (a block after the
// totals, or pages of their own).
func (g *gen) renderClosing() {
	w, l := g.w, &g.lay
	if l.signature {
		g.drawSignature()
	}
	switch l.terms {
	case "block":
		g.feat("terms_block")
		w.nl(1)
		g.drawTermsTitle()
		g.drawTerms(w.left, w.right, g.termParagraphs())
	case "page":
		g.feat("terms_page")
		w.breakPage()
		g.drawTermsPage()
	}
}

func (g *gen) drawSignature() {
	w, r := g.w, g.r
	g.feat("signature")
	w.ensure(4)
	w.nl(1.5)
	if r.chance(0.3) {
		g.feat("computer_generated")
		w.text(w.left, pick(r, g.v.computerGenerated))
		w.nl(1)
		return
	}
	x := w.left + (w.right-w.left)*0.6
	name := g.buyer.name
	if g.kind != "order" {
		name = g.vendor.name
	}
	w.text(x, g.v.forCompany+name)
	w.nl(2)
	lines := g.v.signatureLines
	if len(lines) == 0 {
		lines = []string{"______________________"}
	}
	w.text(x, pick(r, lines))
	w.nl(1)
	w.text(x, pick(r, g.v.signature))
	w.nl(1)
}

// termParagraphs draws 3 to 7 of the language's terms, numbered or not.
func (g *gen) termParagraphs() []string {
	r := g.r
	terms := g.v.terms
	n := r.between(3, min(7, len(terms)))
	start := r.IntN(len(terms))
	numbered := r.chance(0.6)
	var out []string
	for i := range n {
		t := terms[(start+i)%len(terms)]
		if numbered {
			t = fmt.Sprintf("%d. %s", i+1, t)
		}
		out = append(out, t)
	}
	return out
}

func (g *gen) drawTermsTitle() {
	w := g.w
	w.ensure(3)
	w.font("B", 1)
	w.text(w.left, pick(g.r, g.v.termsTitle))
	w.font("", 1)
	w.nl(1.2)
}

func (g *gen) drawTerms(x1, x2 float64, paras []string) {
	w := g.w
	for _, p := range paras {
		lines := w.wrap(p, x2-x1)
		w.ensure(float64(len(lines)))
		w.font("", 0.9)
		for _, s := range lines {
			w.text(x1, s)
			w.nl(1)
		}
	}
	w.font("", 1)
}

// drawTermsPage fills a page with terms, in two columns on some documents
// (pdftotext then alternates the columns' lines).
func (g *gen) drawTermsPage() {
	w := g.w
	paras := g.termParagraphs()
	g.drawTermsTitle()
	if !g.lay.termsTwoCol {
		g.drawTerms(w.left, w.right, paras)
		return
	}
	g.feat("terms_two_column")
	mid := (w.left + w.right) / 2
	half := (len(paras) + 1) / 2
	y0 := w.y
	g.drawTerms(w.left, mid-4, paras[:half])
	w.y = y0
	g.drawTerms(mid+4, w.right, paras[half:])
}

// drawFooter prints the page number line ("Page 1 of 3", the count filled
// in when the PDF is closed) and an optional company line.
func (g *gen) drawFooter() {
	w, l := g.w, &g.lay
	if l.footer == "" && l.footerText == "" {
		return
	}
	y := w.y
	w.y = w.pageH - l.margin + 2
	w.font("", 0.85)
	if l.footerText != "" {
		w.text(w.left, l.footerText)
	}
	if l.footer != "" {
		g.feat("page_footer")
		s := strings.NewReplacer("{p}", itoa(w.pdf.PageNo()), "{n}", nbAlias).Replace(l.footer)
		w.textR(w.right, s)
	}
	w.font("", 1)
	w.y = y
}
