package pogen

import (
	"fmt"
	"strings"
)

// field is a header label with its value. stacked puts the value under the
// label, glued prints them without a space ("PO#:AB1234").
type field struct {
	label, value    string
	stacked, glued  bool
	isDate, isOrder bool
}

// idFields are the fields that carry the order (or document) number, for the
// placements that use a label.
func (g *gen) idFields() []field {
	r, l := g.r, &g.lay
	labels := g.v.orderNo
	if g.kind != "order" {
		labels = g.v.neg[g.kind].numLabels
	}
	switch l.idPlace {
	case "same_line":
		g.feat("label_same_line")
		return []field{{label: pick(r, labels), value: g.orderID, isOrder: true}}
	case "label_above":
		g.feat("label_above")
		return []field{{label: pick(r, labels), value: g.orderID, stacked: true, isOrder: true}}
	case "glued":
		g.feat("glued_label")
		return []field{{label: pick(r, g.v.orderNoGlued), value: g.orderID, glued: true, isOrder: true}}
	case "number_date":
		g.feat("number_date_combined")
		g.printed.orderDate = true
		return []field{{label: pick(r, g.v.orderNoDate), value: g.orderID + " / " + g.fmtDate(g.orderDate), isOrder: true, isDate: true}}
	case "tally":
		g.feat("tally_voucher", "competing_numbers")
		return []field{
			{label: "Voucher No.", value: fmt.Sprint(r.between(1, 250))},
			{label: "Reference No. & Date.", value: g.orderID + " dt. " + g.fmtDate(g.orderDate), isOrder: true},
		}
	}
	return nil
}

// headerFields draws the other header fields: dates, currency, competing
// numbers, terms, contact. Each has its own label, as on real POs, so the
// order number and date must be found by their labels, not by their shape.
func (g *gen) headerFields() []field {
	var fs []field
	fs = append(fs, g.dateFields()...)
	fs = append(fs, g.competingFields()...)
	fs = append(fs, g.termFields()...)
	if g.kind == "order" && g.r.chance(0.06) && g.showsGross() {
		g.feat("header_total")
		g.printed.gross = true
		fs = append(fs, field{label: pick(g.r, g.v.total), value: g.moneyText(g.gross)})
	}
	if g.r.chance(0.3) && len(fs) > 2 {
		g.r.Shuffle(len(fs)-1, func(i, j int) { fs[i+1], fs[j+1] = fs[j+1], fs[i+1] })
	}
	return fs
}

func (g *gen) dateFields() []field {
	r, v := g.r, g.v
	var fs []field
	dateLabels := v.orderDate
	if g.kind != "order" {
		dateLabels = v.neg[g.kind].dateLabels
	}
	if g.lay.idPlace == "tally" {
		dateLabels = []string{"Dated"}
	}
	if g.lay.idPlace != "number_date" && (g.kind != "order" || r.chance(0.97)) {
		fs = append(fs, field{label: pick(r, dateLabels), value: g.fmtDate(g.orderDate), isDate: true})
		g.printed.orderDate = true
	}
	if g.kind == "order" && r.chance(0.55) {
		if r.chance(0.08) {
			g.feat("delivery_words")
			fs = append(fs, field{label: pick(r, v.deliveryDate), value: pick(r, v.deliveryWords)})
		} else {
			fs = append(fs, field{label: pick(r, v.deliveryDate), value: g.fmtDate(g.delivery), isDate: true})
			g.printed.delivery = true
		}
	}
	if r.chance(0.2) {
		val := g.fmtDate(g.orderDate.AddDate(0, 0, r.IntN(4)))
		if r.chance(0.5) {
			g.feat("timestamp")
			val += pick(r, []string{fmt.Sprintf(" %02d:%02d:%02d", r.IntN(24), r.IntN(60), r.IntN(60)), fmt.Sprintf(" %d:%02d PM", r.between(1, 11), r.IntN(60))})
		}
		fs = append(fs, field{label: pick(r, v.printDate), value: val, isDate: true})
	}
	if r.chance(0.15) {
		fs = append(fs, field{label: pick(r, v.quoteDate), value: g.fmtDate(g.orderDate.AddDate(0, 0, -r.between(3, 40))), isDate: true})
	}
	return append(fs, g.negativeDates()...)
}

// negativeDates are the due and validity dates of invoices and quotations,
// and the buyer's order they answer.
func (g *gen) negativeDates() []field {
	r, v := g.r, g.v
	var fs []field
	switch g.kind {
	case "order", "delivery_note":
	case "quotation":
		if r.chance(0.7) {
			fs = append(fs, field{label: pick(r, v.validUntil), value: g.fmtDate(g.orderDate.AddDate(0, 1, 0)), isDate: true})
		}
	default:
		if r.chance(0.7) {
			fs = append(fs, field{label: pick(r, v.dueDate), value: g.fmtDate(g.orderDate.AddDate(0, 0, 30)), isDate: true})
		}
	}
	if g.kind != "order" && g.kind != "quotation" && r.chance(0.6) {
		g.feat("order_reference")
		g.printed.orderRef = true
		fs = append(fs, field{label: pick(r, v.yourOrder), value: g.orderRef})
	}
	return fs
}

// competingFields are other numbers near the order number: vendor and
// customer numbers, requisitions, quotations, contracts, revisions.
func (g *gen) competingFields() []field {
	r, v := g.r, g.v
	var fs []field
	add := func(p float64, labels []string, value string) {
		if r.chance(p) {
			fs = append(fs, field{label: pick(r, labels), value: value})
			g.feat("competing_numbers")
		}
	}
	g.vendorNo = pick(r, []string{fmt.Sprint(r.between(100000, 999999)), fmt.Sprintf("V-%05d", r.IntN(1e5)), g.newID("digits")})
	add(0.5, v.vendorNo, g.vendorNo)
	add(0.08, v.customerNo, fmt.Sprint(r.between(10000, 9999999)))
	add(0.15, v.requisition, pick(r, []string{fmt.Sprintf("REQ-%06d", r.IntN(1e6)), fmt.Sprintf("10%08d", r.IntN(1e8)), g.newID(pickW(r, g.reg.ids))}))
	add(0.18, v.quoteRef, pick(r, []string{fmt.Sprintf("Q-%d-%04d", g.orderDate.Year(), r.IntN(1e4)), g.newID(pickW(r, g.reg.ids))}))
	add(0.08, v.contract, fmt.Sprintf("46%08d", r.IntN(1e8)))
	if r.chance(0.18) {
		g.feat("revision_field")
		fs = append(fs, field{label: pick(r, v.revision), value: pick(r, []string{"0", "1", "2", "03", "01"})})
	}
	return fs
}

func (g *gen) termFields() []field {
	r, v := g.r, g.v
	var fs []field
	if g.curMode == "code_label" {
		fs = append(fs, field{label: pick(r, v.currency), value: g.cur.code})
		g.printed.currency = true
	}
	if r.chance(0.55) {
		fs = append(fs, field{label: pick(r, v.payTerms), value: pick(r, v.payValues)})
	}
	if r.chance(0.35) {
		fs = append(fs, field{label: pick(r, v.incoterms), value: pick(r, v.incoValues)})
	}
	if r.chance(0.4) {
		fs = append(fs, field{label: pick(r, v.buyer), value: pick(r, g.reg.people)})
	}
	return fs
}

// labelText is a label as printed before a value on the same line.
func (g *gen) labelText(label string) string {
	if strings.HasSuffix(label, ":") || strings.HasSuffix(label, "-") {
		return label + " "
	}
	if g.lay.colon == "  " {
		g.feat("label_no_colon")
	}
	return label + g.lay.colon
}

// fieldWidth is the width a field needs on one line.
func (g *gen) fieldWidth(f field) float64 {
	w := g.w
	if f.stacked {
		return max(w.width(f.label), w.width(f.value))
	}
	return w.width(g.labelText(f.label)) + w.width(f.value)
}

func (g *gen) showsGross() bool {
	t := g.lay.totals
	return t == "total" || strings.HasSuffix(t, "gross")
}
