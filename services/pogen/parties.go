package pogen

import (
	"fmt"
	"strings"
)

type partyBlock struct {
	label string
	p     party
	extra []string
}

// partyBlocks are the address blocks: supplier, ship-to and bill-to for
// orders (the bill-to often labelled "Invoice ..."), customer and ship-to for
// negatives, whose letterhead is the seller.
func (g *gen) partyBlocks() []partyBlock {
	r, v, l := g.r, g.v, &g.lay
	if g.kind != "order" {
		return []partyBlock{{label: pick(r, v.customer), p: g.buyer}, {label: pick(r, v.shipTo), p: g.shipTo}}
	}
	vendor := partyBlock{label: pick(r, v.vendor), p: g.vendor}
	if r.chance(0.25) {
		g.feat("competing_numbers")
		vendor.extra = append(vendor.extra, pick(r, v.vendorNo)+": "+g.vendorNo)
	}
	blocks := []partyBlock{vendor, {label: pick(r, v.shipTo), p: g.shipTo}}
	if l.partyCount == 3 || !l.letterhead {
		labels := v.billTo
		if l.invoiceTo {
			labels = v.invoiceTo
			g.feat("invoice_mention")
		}
		g.feat("bill_to")
		blocks = append(blocks, partyBlock{label: pick(r, labels), p: g.buyer})
	}
	return blocks
}

// drawParties draws the blocks side by side (the commonest cause of
// interleaved lines in pdftotext -layout) or one under the other.
func (g *gen) drawParties() {
	w := g.w
	blocks := g.partyBlocks()
	if !g.lay.sideBySide {
		for _, b := range blocks {
			g.drawPartyBlock(w.left, w.right-w.left, b)
			w.nl(0.5)
		}
		return
	}
	g.feat("side_by_side_blocks")
	colW := (w.right - w.left) / float64(len(blocks))
	y0, yMax := w.y, w.y
	for i, b := range blocks {
		w.y = y0
		g.drawPartyBlock(w.left+float64(i)*colW, colW-4, b)
		yMax = max(yMax, w.y)
	}
	w.y = yMax + w.lh*0.5
}

func (g *gen) drawPartyBlock(x, width float64, b partyBlock) {
	w := g.w
	w.font("B", 1)
	for _, s := range w.wrap(b.label, width) {
		w.text(x, s)
		w.nl(1)
	}
	w.font("", 1)
	lines := append(append([]string{b.p.name}, b.p.lines...), b.extra...)
	for _, line := range lines {
		for _, s := range w.wrap(line, width) {
			w.text(x, s)
			w.nl(1)
		}
	}
}

// drawNotes prints the harmless "invoice" sentences of orders (often with
// the order number again) and the bank line of invoices.
func (g *gen) drawNotes() {
	w, r, l := g.w, g.r, &g.lay
	var notes []string
	if l.notes {
		n := pick(r, g.v.invoiceRefs)
		g.feat("invoice_mention")
		if strings.Contains(n, "{id}") {
			g.feat("id_repeated")
		}
		notes = append(notes, g.fill(n))
	}
	if g.kind == "invoice" || g.kind == "proforma" {
		notes = append(notes, g.bankLine())
	}
	for _, n := range notes {
		for _, s := range w.wrap(n, w.right-w.left) {
			w.text(w.left, s)
			w.nl(1)
		}
	}
	if len(notes) > 0 {
		w.nl(0.5)
	}
}

// bankLine is an invoice's payment details (IBAN or account numbers).
func (g *gen) bankLine() string {
	r := g.r
	g.feat("bank_details")
	iban := fmt.Sprintf("%s%02d %04d %04d %04d %04d %02d", "DE", r.IntN(100), r.IntN(1e4), r.IntN(1e4), r.IntN(1e4), r.IntN(1e4), r.IntN(100))
	f := pick(r, g.v.bank)
	return strings.NewReplacer(
		"{iban}", iban, "{bic}", letters(r, 6)+"XXX", "{bank}", pick(r, []string{"Commerzbank", "BNP Paribas", "ING Bank", "HDFC Bank", "Chase"}),
		"{acct}", fmt.Sprint(r.Int64N(1e12)), "{routing}", fmt.Sprintf("%09d", r.IntN(1e9)),
	).Replace(f)
}
