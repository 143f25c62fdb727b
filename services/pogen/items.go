package pogen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// drawTraits draws the table and totals traits that shape the items and the
// amounts, in the proportions of real POs (LAYOUTS.md section 2).
func (g *gen) drawTraits() {
	r, l := g.r, &g.lay
	l.posStyle = pickW(r, []weighted[string]{{32, "1"}, {10, "10"}, {9, "0010"}, {5, "001"}, {3, "00010"}, {24, "none"}})
	l.noPrices = g.kind == "delivery_note" || g.kind == "order" && r.chance(0.07)
	if !l.noPrices {
		l.noAmounts = r.chance(0.1)
		l.basis = pickW(r, []weighted[string]{{88, ""}, {8, "column"}, {4, "inline"}})
		l.discount = r.chance(0.2)
		l.discountNonzero = l.discount && r.chance(0.35)
	}
	l.qtyUnitCell = r.chance(0.2)
	l.lineDates = r.chance(0.35)
	l.schedule = !l.lineDates && r.chance(0.2)
	l.refs = r.chance(0.25)
	l.spec = r.chance(0.2)
	l.hsn = g.reg.name == "in" && r.chance(0.5)
	l.numbersMiddle = r.chance(0.06) // two-row records cancel it (drawLayout)
	l.totals = g.drawTotalsStyle()
	l.totalQty = pickW(r, []weighted[string]{{86, ""}, {7, "row"}, {7, "table"}})
	if l.totalQty == "table" && l.noPrices {
		l.totalQty = "row"
	}
	showsGross := strings.HasSuffix(l.totals, "gross") || l.totals == "total"
	wordsP := 0.08
	if g.reg.name == "in" {
		wordsP = 0.85
	}
	l.words = g.v.lang == "en" && g.curMode != "none" && showsGross && r.chance(wordsP)
}

func (g *gen) drawTotalsStyle() string {
	if g.lay.noPrices {
		return "none"
	}
	s := pickW(g.r, []weighted[string]{{10, "none"}, {30, "total"}, {35, "net_tax_gross"}, {10, "net"}, {7, "net_charges_gross"}, {8, "net_tax_charges_gross"}})
	switch {
	case g.kind == "order":
	case g.kind == "credit_note" && strings.Contains(s, "charges"), s == "none", s == "net":
		s = "net_tax_gross" // invoices and quotations always total up
	}
	return s
}

// drawItems draws the item rows: count, products, quantities, prices,
// bases, discounts, dates and sub-rows.
func (g *gen) drawItems() {
	r := g.r
	span := pickW(r, []weighted[[2]int]{{45, [2]int{1, 5}}, {30, [2]int{6, 15}}, {20, [2]int{16, 40}}, {5, [2]int{41, 80}}})
	n := r.between(span[0], span[1])
	pool := products
	switch {
	case g.reg.name == "in" && r.chance(0.6):
		pool = indianProducts
	case g.v.lang == "en" && g.reg.name != "in" && r.chance(0.15):
		pool = apparelProducts
	}
	unit := "" // one unit for the whole order, a piece unit, or one per item
	if r.chance(0.5) {
		unit = pick(r, g.v.units[:3])
	}
	artStyle := r.IntN(5)
	for i := range n {
		it := g.newItem(pick(r, pool), unit)
		it.pos = posText(g.lay.posStyle, i)
		it.art = articleNo(r, artStyle)
		g.items = append(g.items, it)
	}
}

func posText(style string, i int) string {
	switch style {
	case "10":
		return strconv.Itoa((i + 1) * 10)
	case "0010":
		return fmt.Sprintf("%04d", (i+1)*10)
	case "00010":
		return fmt.Sprintf("%05d", (i+1)*10)
	case "001":
		return fmt.Sprintf("%03d", i+1)
	}
	return strconv.Itoa(i + 1)
}

// articleNo draws an article number in one of five house styles.
func articleNo(r *rng, style int) string {
	switch style {
	case 0:
		return fmt.Sprintf("%s-%05d", letters(r, 2), r.IntN(1e5))
	case 1:
		return fmt.Sprintf("%09d", r.IntN(1e9))
	case 2:
		return fmt.Sprintf("%04d-%04d", r.IntN(1e4), r.IntN(1e4))
	case 3:
		return fmt.Sprintf("%s%05d", letters(r, 1), r.IntN(1e5))
	}
	return fmt.Sprintf("%03d.%03d.%03d", r.IntN(1e3), r.IntN(1e3), r.IntN(1e3))
}

func (g *gen) newItem(p product, unit string) *item {
	r := g.r
	name := p.names[g.v.productCol]
	if name == "" {
		name = p.names[0]
	}
	it := &item{segs: []string{name, pick(r, p.specs)}, unit: unit, basis: 1, disc: dec{0, 2}}
	if r.chance(0.25) || g.lay.numbersMiddle {
		it.segs[1] += ","
		it.segs = append(it.segs, pick(r, g.v.attrs))
	}
	it.desc = strings.Join(it.segs, " ")
	if it.unit == "" {
		it.unit = pick(r, g.v.units)
	}
	it.price = g.newPrice(p)
	it.qty = g.newQty(it.price, it.unit)
	g.drawBasis(it)
	g.drawDiscount(it)
	it.amount = lineAmount(it.qty, it.price, it.basis, it.disc)
	for it.amount.isZero() { // a cent's worth at least, as any real line
		it.qty.u *= 10
		it.amount = lineAmount(it.qty, it.price, it.basis, it.disc)
	}
	if g.kind == "credit_note" {
		it.qty.u, it.amount.u = -it.qty.u, -it.amount.u
	}
	g.drawItemExtras(it)
	return it
}

// newPrice draws a unit price log-uniformly in the product's range, printed
// with the document's decimals (extra decimals often zero: "4.12000").
func (g *gen) newPrice(p product) dec {
	r := g.r
	lo, hi := p.lo, p.hi
	if g.cur.code == "INR" && p.hi < 300 {
		lo, hi = lo*80, hi*80
	}
	v := math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo)))
	dp := g.priceDP
	if dp > 2 && r.chance(0.5) {
		return dec{max(1, int64(math.Round(v*100))), 2}.rescale(dp)
	}
	return dec{max(1, int64(math.Round(v*float64(pow10[dp])))), dp}
}

// newQty draws a quantity fitting the price: cheap parts by the thousand,
// expensive ones by the piece; fractional only for weights and lengths and
// when the document prints decimals.
func (g *gen) newQty(price dec, unit string) dec {
	r := g.r
	p := float64(price.u) / float64(pow10[price.s])
	var choices []int64
	switch {
	case p < 1:
		choices = []int64{100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 25000}
	case p < 20:
		choices = []int64{1, 2, 5, 10, 12, 20, 24, 25, 36, 48, 50, 60, 100, 144, 200, 240, 480, 500, 1000}
	case p < 500:
		choices = []int64{1, 2, 3, 4, 5, 6, 8, 10, 12, 20, 24, 25, 50, 100}
	default:
		choices = []int64{1, 2, 3, 4, 5, 10}
	}
	q := dec{pick(r, choices) * pow10[g.qtyDP], g.qtyDP}
	if g.qtyDP > 0 && strings.Contains("|kg|KG|m|M|LB|", "|"+unit+"|") && r.chance(0.5) {
		q.u += r.Int64N(pow10[g.qtyDP])
	}
	return q
}

// drawBasis moves cheap items to a price per 100 or per 1,000.
func (g *gen) drawBasis(it *item) {
	if g.lay.basis == "" || it.price.u >= pow10[it.price.s] {
		return
	}
	it.basis = 100
	if g.r.chance(0.35) {
		it.basis = 1000
	}
	it.price.u *= it.basis
}

var discounts = []string{"2", "3", "5", "7.5", "10", "12.5", "15", "20", "25", "33", "40", "50", "75"}

func (g *gen) drawDiscount(it *item) {
	if g.lay.discountNonzero && g.r.chance(0.5) {
		it.disc = parseDec(pick(g.r, discounts)).rescale(2)
	}
}

// drawItemExtras draws line dates, schedules, references, spec text, HSN.
func (g *gen) drawItemExtras(it *item) {
	r, l := g.r, &g.lay
	switch {
	case l.lineDates && r.chance(0.5):
		it.date = g.delivery
	case l.lineDates:
		it.date = g.orderDate.AddDate(0, 0, r.between(7, 120))
	case l.schedule && r.chance(0.5):
		g.drawSchedule(it)
	}
	if l.refs && r.chance(0.6) {
		it.ref = pick(r, g.v.materialRef) + articleNo(r, r.IntN(5))
	}
	if l.spec && r.chance(0.4) {
		start := r.IntN(len(g.v.attrs))
		for i := range r.between(1, 3) {
			it.spec = append(it.spec, g.v.attrs[(start+i)%len(g.v.attrs)])
		}
	}
	if l.hsn {
		it.hsn = pick(r, []string{"8482", "7318", "8544", "3923", "4819", "6109", "8481"}) + fmt.Sprintf("%04d", r.IntN(1e4))
	}
}

// drawSchedule splits the quantity into 2 or 3 delivery lines of whole units.
func (g *gen) drawSchedule(it *item) {
	unit := pow10[it.qty.s]
	whole := it.qty.u / unit
	k := int64(g.r.between(2, 3))
	if whole < k {
		return
	}
	left := it.qty.u
	d := g.delivery
	for i := int64(0); i < k; i++ {
		part := left
		if i < k-1 {
			part = (whole / k) * unit
		}
		left -= part
		it.sched = append(it.sched, schedLine{d, dec{part, it.qty.s}})
		d = d.AddDate(0, 0, g.r.between(7, 30))
	}
	it.date = it.sched[0].date
}

// parseDec reads a plain decimal ("7.5").
func parseDec(s string) dec {
	i, f, _ := strings.Cut(s, ".")
	u, _ := strconv.ParseInt(i+f, 10, 64)
	return dec{u, len(f)}
}

// drawTotals computes net, tax rows, charges, gross and total quantity.
func (g *gen) drawTotals() {
	var amounts []dec
	g.totalQty = dec{0, g.qtyDP}
	for _, it := range g.items {
		amounts = append(amounts, it.amount)
		g.totalQty.u += it.qty.u
	}
	g.net = addAll(amounts...)
	g.tax, g.charges = dec{0, 2}, dec{0, 2}
	if strings.Contains(g.lay.totals, "tax") {
		g.taxRows = g.newTaxRows()
		for _, t := range g.taxRows {
			g.tax.u += t.amount.u
		}
	}
	if strings.Contains(g.lay.totals, "charges") {
		g.charges = dec{int64(g.r.between(5, 250))*100 + g.r.Int64N(100), 2}
		if g.cur.code == "INR" {
			g.charges.u *= 20
		}
	}
	g.gross = addAll(g.net, g.tax, g.charges)
}

// newTaxRows draws the tax rows of the region: sales tax, VAT, or GST split
// into CGST and SGST halves (or IGST).
func (g *gen) newTaxRows() []taxRow {
	r := g.r
	rate := parseDec(pick(r, g.reg.rates))
	rateText := func(d dec) string { return numConv{"", g.num.point, false}.format(d) }
	switch g.reg.tax {
	case "sales":
		label := pick(r, []string{"Sales Tax {r}%", "Tax ({r}%)", "Sales Tax", "TAX"})
		return []taxRow{{strings.ReplaceAll(label, "{r}", rateText(rate)), percentOf(g.net, rate)}}
	case "gst":
		g.feat("tax_gst")
		if r.chance(0.6) {
			half := dec{rate.u * 5, rate.s + 1}
			if half.u%10 == 0 {
				half = dec{half.u / 10, rate.s}
			}
			f := pick(r, []string{"{t} @ {r}%", "{t} {r}%", "Add: {t} @ {r} %"})
			lab := func(t string) string {
				return strings.NewReplacer("{t}", t, "{r}", rateText(half)).Replace(f)
			}
			return []taxRow{{lab("CGST"), percentOf(g.net, half)}, {lab("SGST"), percentOf(g.net, half)}}
		}
		return []taxRow{{"IGST @ " + rateText(rate) + "%", percentOf(g.net, rate)}}
	}
	g.feat("tax_vat")
	return []taxRow{{strings.ReplaceAll(pick(r, g.v.taxFmt), "{r}", rateText(rate)), percentOf(g.net, rate)}}
}
