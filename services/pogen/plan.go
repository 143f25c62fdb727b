package pogen

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// gen holds one document while it is drawn and rendered.
type gen struct {
	seed  int64
	r     *rng
	kind  string
	reg   *region
	v     *vocab
	feats []string

	num, totNum                numConv
	dateLayout, lineDateLayout string
	cur                        currency
	curMode                    string // code_label, code_amounts, symbol, column_header, none
	symbolInCells              bool
	qtyDP, priceDP             int

	buyer, vendor, shipTo party
	orderID, orderRef     string
	vendorNo              string // the supplier's number, printed in the header or the vendor block
	orderDate, delivery   time.Time
	items                 []*item
	net, tax, charges     dec
	gross, totalQty       dec
	taxRows               []taxRow

	lay        layout
	printed    printed
	w          *writer
	valueRight float64 // right edge of the amounts, where totals align
}

// printed records which truth values the rendered document shows.
type printed struct {
	orderDate, delivery, currency, orderRef  bool
	net, tax, charges, gross, totalQty, date bool
	lineDateOther                            bool // a line date in another layout than the header's
}

type taxRow struct {
	label  string
	amount dec
}

type item struct {
	pos, art, desc, hsn, unit, ref string
	segs                           []string // description parts: name, spec, attribute
	spec                           []string
	qty, price, disc, amount       dec
	basis                          int64
	date                           time.Time
	sched                          []schedLine
}

type schedLine struct {
	date time.Time
	qty  dec
}

var negKinds = []weighted[string]{{40, "invoice"}, {15, "delivery_note"}, {15, "quotation"}, {12, "credit_note"}, {18, "proforma"}}

// allDateLayouts are drawn for the 10 % of documents that use a convention
// foreign to their region.
var allDateLayouts = []string{"MM/DD/YYYY", "M/D/YY", "MM/DD/YY", "Mon DD, YYYY", "DD-MON-YY", "DD-Mon-YYYY",
	"DD-MON-YYYY", "YYYY-MM-DD", "DD-MM-YYYY", "DD/MM/YYYY", "DD.MM.YYYY", "DD.MM.YY", "DD/MM/YY", "DD-MM-YY",
	"D Month YYYY", "DD Mon, YYYY", "DD Mon YYYY", "DD/Mon/YY"}

var foreignConvs = []numConv{convUS, convEU, convSpace, convSwiss, convPlain, convPlainEU, convSpaceDot}

func newGen(seed int64) *gen {
	g := &gen{seed: seed, r: newRng(seed), kind: "order"}
	ws := make([]weighted[*region], len(regions))
	for i, rg := range regions {
		ws[i] = weighted[*region]{rg.weight, rg}
	}
	g.reg = pickW(g.r, ws)
	g.v = g.reg.v
	if g.r.chance(0.08) {
		g.kind = pickW(g.r, negKinds)
		g.feat("negative")
	}
	g.drawConventions()
	return g
}

// drawConventions picks the number, date and currency conventions: mostly
// the region's, sometimes a foreign one, because buyers print what their ERP
// was configured with.
func (g *gen) drawConventions() {
	r := g.r
	g.num = pickW(r, g.reg.convs)
	if r.chance(0.1) {
		g.num = pick(r, foreignConvs)
	}
	g.totNum = g.num
	if r.chance(0.08) {
		g.totNum = mixedConv(g.num)
		g.feat("mixed_grouping")
	}
	g.dateLayout = pickW(r, g.reg.dates)
	if r.chance(0.1) {
		g.dateLayout = pick(r, allDateLayouts)
	}
	g.lineDateLayout = g.dateLayout
	if r.chance(0.15) {
		g.lineDateLayout = sameOrderLayout(r, g.dateLayout)
	}
	g.cur = pickW(r, g.reg.currency)
	g.curMode = pickW(r, []weighted[string]{{30, "code_label"}, {22, "code_amounts"}, {20, "symbol"}, {8, "column_header"}, {17, "none"}})
	if g.curMode == "symbol" && g.cur.symbol == "" {
		g.curMode = "code_amounts"
	}
	g.symbolInCells = g.curMode == "symbol" && r.chance(0.35)
	g.qtyDP = pickW(r, []weighted[int]{{62, 0}, {25, 3}, {9, 2}, {4, 4}})
	g.priceDP = pickW(r, []weighted[int]{{70, 2}, {8, 3}, {12, 4}, {10, 5}})
}

// mixedConv is the other grouping of the same decimal point, for totals
// printed by another part of the ERP than the lines.
func mixedConv(c numConv) numConv {
	if c.group != "" {
		return numConv{"", c.point, false}
	}
	if c.point == "," {
		return convEU
	}
	return convUS
}

func sameOrderLayout(r *rng, layout string) string {
	var same []string
	for _, l := range allDateLayouts {
		if l != layout && dateOrder(l) == dateOrder(layout) {
			same = append(same, l)
		}
	}
	if len(same) == 0 {
		return layout
	}
	return pick(r, same)
}

// drawContent draws what the document says: parties, numbers, dates, items
// and amounts. The table traits are drawn first because they shape items.
func (g *gen) drawContent() {
	g.drawTraits()
	g.buyer = g.newParty("")
	g.vendor = g.newParty(g.buyer.name)
	g.shipTo = g.buyer
	if g.r.chance(0.4) {
		g.shipTo = party{g.buyer.name + pick(g.r, []string{" - Warehouse", " - Dock 4", " - Plant 2", " (Stores)"}), g.newParty("").lines}
	}
	start := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	g.orderDate = start.AddDate(0, 0, g.r.IntN(8*365))
	g.delivery = g.orderDate.AddDate(0, 0, g.r.between(5, 90))
	idStyle := pickW(g.r, g.reg.ids)
	g.orderID = g.newID(idStyle)
	if g.kind == "order" {
		g.feat("id_" + idStyle)
	} else {
		g.orderRef = g.newID(pickW(g.r, g.reg.ids))
	}
	g.drawItems()
	g.drawTotals()
}

// newParty draws a company and its address lines, avoiding the name other.
func (g *gen) newParty(other string) party {
	rg := g.reg
	name := pick(g.r, rg.companies)
	for name == other {
		name = pick(g.r, rg.companies)
	}
	lines := []string{pick(g.r, rg.streets), pick(g.r, rg.cities)}
	if g.r.chance(0.3) {
		lines = append(lines, rg.country)
	}
	switch {
	case rg.name == "in" && g.r.chance(0.7):
		lines = append(lines, fmt.Sprintf("GSTIN: %02d%s%04d%c1Z%d", g.r.between(1, 36), letters(g.r, 5), g.r.IntN(10000), 'A'+rune(g.r.IntN(26)), g.r.IntN(10)))
	case rg.name == "ch" && g.r.chance(0.3):
		lines = append(lines, fmt.Sprintf("CHE-%03d.%03d.%03d MWST", g.r.IntN(1e3), g.r.IntN(1e3), g.r.IntN(1e3)))
	case rg.tax == "vat" && g.r.chance(0.3):
		lines = append(lines, fmt.Sprintf("VAT ID: %s%09d", strings.ToUpper(strings.ReplaceAll(rg.name, "uk", "gb")), g.r.IntN(1e9)))
	case g.r.chance(0.3):
		lines = append(lines, fmt.Sprintf("Tel. +%d %d %d", g.r.between(1, 49), g.r.between(100, 999), g.r.between(100000, 9999999)))
	}
	return party{name, lines}
}

func letters(r *rng, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('A' + r.IntN(26))
	}
	return string(b)
}

// newID draws an order (or document) number of a style: digits, letter
// prefix, hyphen groups, or the Indian slash form with the fiscal year.
func (g *gen) newID(style string) string {
	r := g.r
	switch style {
	case "prefix":
		return pick(r, []string{letters(r, 2), "PO", letters(r, 3)}) + fmt.Sprintf("%0*d", r.between(5, 7), r.IntN(1e5))
	case "hyphen":
		y := g.orderDate.Year()
		return pick(r, []string{
			fmt.Sprintf("%d-%d", r.between(100000, 999999), r.IntN(10)),
			fmt.Sprintf("%d-%02d-%06d", y, g.orderDate.Month(), r.IntN(1e5)),
			fmt.Sprintf("PO-%d-%04d", y, r.IntN(1e4)),
			fmt.Sprintf("%s-%02d-%04d", letters(r, 2), y%100, r.IntN(1e4)),
		})
	case "slash":
		fy := g.fiscalYear()
		return pick(r, []string{
			fmt.Sprintf("%s/%s/%d", letters(r, 2), fy, r.between(1, 999)),
			fmt.Sprintf("%s/PUR/%s/%02d/%06d", letters(r, 2), fy, g.orderDate.Month(), r.IntN(1e5)),
			fmt.Sprintf("PO/%d-%02d/%04d", g.fyStart(), (g.fyStart()+1)%100, r.IntN(1e4)),
		})
	}
	return pick(r, []string{
		fmt.Sprintf("45%08d", r.IntN(1e6)),
		fmt.Sprint(r.between(100000, 999999)),
		fmt.Sprint(r.between(1000000, 9999999)),
		fmt.Sprintf("%d", r.between(10000000, 99999999)),
	})
}

// fyStart is the first year of the Indian fiscal year (April to March).
func (g *gen) fyStart() int {
	if g.orderDate.Month() >= time.April {
		return g.orderDate.Year()
	}
	return g.orderDate.Year() - 1
}

func (g *gen) fiscalYear() string {
	y := g.fyStart()
	return fmt.Sprintf("%02d-%02d", y%100, (y+1)%100)
}

// fmtDate prints a header date; lineDate a date in the table. Both record
// the traits of the layout they print with.
func (g *gen) fmtDate(t time.Time) string {
	g.feat(dateFeatures(g.dateLayout)...)
	g.printed.date = true
	return formatDate(g.dateLayout, t, g.v)
}

func (g *gen) lineDate(t time.Time) string {
	g.feat(dateFeatures(g.lineDateLayout)...)
	if g.lineDateLayout != g.dateLayout {
		g.printed.lineDateOther = true
	}
	return formatDate(g.lineDateLayout, t, g.v)
}

func iso(t time.Time) string { return t.Format("2006-01-02") }

// has reports whether the table prints a column.
func (l *layout) has(key string) bool { return slices.Contains(l.cols, key) }
