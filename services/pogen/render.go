package pogen

import (
	"strings"
)

// layout holds the drawn presentation choices of one document.
type layout struct {
	// table and totals traits (drawTraits)
	cols                                 []string
	posStyle, basis, totals, totalQty    string
	noPrices, noAmounts, qtyUnitCell     bool
	discount, discountNonzero, lineDates bool
	schedule, refs, spec, hsn, words     bool

	// page and header (drawLayout)
	family                         string
	size, margin                   float64
	idPlace, fieldStyle, colon     string
	tabular, letterhead, centered  bool
	spacedTitle                    bool
	title, copyMark                string
	partyCount                     int
	sideBySide, invoiceTo          bool
	footer, footerText             string
	repeatHeader, continued, rules bool
	headerLines                    int
	headerAlign                    string // bottom, top, middle
	twoRow, numbersMiddle          bool
	unitFirst, dateFirst, emptyPx  bool
	terms                          string // "", block, page
	termsTwoCol, signature         bool
	notes, barcode                 bool
	symbolAfter, codeAfter         bool
	schedTmpl                      string
}

// drawLayout draws the page, header and table presentation.
func (g *gen) drawLayout() {
	r, l := g.r, &g.lay
	l.family = pickW(r, []weighted[string]{{68, "Helvetica"}, {18, "Courier"}, {14, "Times"}})
	l.size = 7.5 + float64(r.IntN(6))*0.5
	if l.family == "Courier" {
		l.size = 7 + float64(r.IntN(4))*0.5
	}
	l.margin = float64(r.between(10, 18))
	g.drawIDPlace()
	l.fieldStyle = pickW(r, []weighted[string]{{60, "kv"}, {12, "kv2"}, {16, "grid"}, {12, "boxed"}})
	if l.idPlace == "label_above" && r.chance(0.8) {
		l.fieldStyle = pick(r, []string{"grid", "boxed"})
	}
	l.colon = pickW(r, []weighted[string]{{72, ": "}, {10, " : "}, {12, "  "}, {6, " - "}})
	l.tabular = r.chance(0.5)
	l.letterhead = r.chance(0.85)
	l.centered = r.chance(0.35)
	l.title = g.drawTitle()
	if r.chance(0.09) {
		l.copyMark = pick(r, g.v.copyMarks)
	}
	l.partyCount = pickW(r, []weighted[int]{{55, 2}, {45, 3}})
	l.sideBySide = r.chance(0.75)
	l.invoiceTo = r.chance(0.4)
	g.drawPageTraits()
}

// drawIDPlace draws where the order number sits relative to its label.
func (g *gen) drawIDPlace() {
	places := []weighted[string]{{48, "same_line"}, {17, "label_above"}, {13, "title_number"}, {6, "under_title"}, {6, "glued"}, {6, "number_date"}}
	if g.reg.name == "in" {
		places = append(places, weighted[string]{12, "tally"})
	}
	g.lay.idPlace = pickW(g.r, places)
	if g.kind != "order" && g.lay.idPlace != "label_above" && g.lay.idPlace != "title_number" {
		g.lay.idPlace = "same_line"
	}
}

func (g *gen) drawTitle() string {
	r := g.r
	titles := g.v.titles
	if g.kind != "order" {
		titles = g.v.neg[g.kind].titles
	}
	t := pick(r, titles)
	if r.chance(0.04) && t == strings.ToUpper(t) && !strings.ContainsAny(t, "ÀÁÂÄÉÈÊÍÓÚÑ'") {
		g.lay.spacedTitle = true
	}
	return t
}

func (g *gen) drawPageTraits() {
	r, l := g.r, &g.lay
	if r.chance(0.6) {
		l.footer = pick(r, g.v.pageFmt)
		if r.chance(0.4) {
			l.footerText = g.buyer.name
		}
	}
	l.repeatHeader = r.chance(0.75)
	l.continued = r.chance(0.3)
	l.rules = r.chance(0.45)
	l.twoRow = r.chance(0.12)
	l.headerLines = pickW(r, []weighted[int]{{43, 1}, {35, 2}, {22, 3}})
	if l.twoRow {
		l.headerLines = 1
	}
	l.headerAlign = pickW(r, []weighted[string]{{70, "bottom"}, {15, "top"}, {15, "middle"}})
	l.unitFirst = r.chance(0.04)
	l.dateFirst = r.chance(0.5)
	l.emptyPx = l.noPrices && r.chance(0.7)
	l.terms = pickW(r, []weighted[string]{{50, ""}, {30, "block"}, {20, "page"}})
	if g.kind != "order" { // the terms are a buyer's purchase terms
		l.terms = ""
	}
	l.termsTwoCol = l.terms == "page" && r.chance(0.3)
	l.signature = r.chance(0.5)
	l.notes = g.kind == "order" && r.chance(0.5)
	l.barcode = r.chance(0.04)
	l.symbolAfter = g.num.point == "," && r.chance(0.7)
	l.codeAfter = r.chance(0.5)
	l.schedTmpl = pick(r, g.v.schedule)
}

// render writes the PDF: header, parties, table, totals, terms, footers.
func (g *gen) render() ([]byte, error) {
	l := &g.lay
	g.w = newWriter(g.reg.letter, l.family, l.size, l.margin)
	g.recordStyleFeatures()
	g.w.footer = g.drawFooter
	g.renderHeader()
	g.renderTable()
	g.renderTotals()
	g.renderClosing()
	g.recordCurrencyFeatures()
	if g.printed.date && g.printed.lineDateOther {
		g.feat("mixed_date_formats")
	}
	return g.w.close()
}

func (g *gen) recordStyleFeatures() {
	l := &g.lay
	switch l.family {
	case "Courier":
		g.feat("font_fixed")
	case "Times":
		g.feat("font_serif")
	default:
		g.feat("font_proportional")
	}
	if g.reg.letter {
		g.feat("paper_letter")
	}
	switch {
	case g.num.lakh:
		g.feat("lakh")
	case g.num.group == " ":
		g.feat("space_grouping")
	case g.num.group == "'":
		g.feat("apostrophe_grouping")
	case g.num.group == "":
		g.feat("ungrouped")
	}
	if g.num.point == "," {
		g.feat("comma_decimal")
	}
	if g.priceDP > 2 {
		g.feat("price_decimals_" + string(rune('0'+g.priceDP)))
	}
	if g.qtyDP > 0 {
		g.feat("qty_decimals")
	}
}

// recordCurrencyFeatures names how the currency was shown, once rendering
// has told whether it was shown at all.
func (g *gen) recordCurrencyFeatures() {
	if !g.printed.currency {
		g.feat("currency_none")
		return
	}
	switch g.curMode {
	case "symbol":
		g.feat("currency_symbol")
	case "code_label":
		g.feat("currency_code_label")
	case "code_amounts":
		g.feat("currency_code_amounts")
	case "column_header":
		g.feat("currency_column_header")
	}
}

// fill replaces {id}, {title}, {domain} placeholders.
func (g *gen) fill(s string) string {
	return strings.NewReplacer("{id}", g.orderID, "{title}", g.lay.title, "{domain}", domain(g.buyer.name)).Replace(s)
}

// domain makes a plausible mail domain from a company name.
func domain(name string) string {
	w := strings.ToLower(strings.Fields(name)[0])
	var b strings.Builder
	for _, c := range w {
		if c >= 'a' && c <= 'z' {
			b.WriteRune(c)
		}
	}
	if b.Len() < 3 {
		b.WriteString("corp")
	}
	return b.String() + ".com"
}
