package generic

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/docintake/docintake/pkg/order"
)

// total is one printed summary amount.
type total struct {
	kind  string // net, tax, charge, gross, quantity
	value string
	at    Position
}

var totalKinds = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"quantity", qtyTotalLabels}, {"gross", payLabels}, {"net", netLabels}, {"tax", taxLabels}, {"charge", chargeLabels}, {"gross", grossLabels},
}

// totalOf reads a totals line: a cell that is a totals label, and the last
// number right of it on the line.
func (r *reader) totalOf(l *line) (total, bool) {
	for ci, c := range l.cells {
		for _, tk := range totalKinds {
			label, rest, ok := matchLabel(tk.re, c)
			if !ok {
				continue
			}
			if tk.kind == "net" && rest != "" && strings.EqualFold(strings.Trim(label, ": "), "net") {
				continue // "NET 60": payment terms, not a total
			}
			if v, at, ok := r.lastNumber(l, ci, rest); ok {
				at.Label = label
				kind := tk.kind
				if kind == "gross" && netMarker.MatchString(fold(c.text)) {
					kind = "net" // "Summe (zzgl. MwSt.)", "Total excl. tax"
				}
				return total{kind: kind, value: v, at: at}, true
			}
		}
	}
	return total{}, false
}

// netMarker says a total is before tax.
var netMarker = regexp.MustCompile(`\b(?:excl|excluding|exclusive|zzgl|before\s+tax|w/o|without|hors|h\.?t\.?|netto|sans|senza|sin|excl\.?\s*btw)\b`)

// lastNumber is the last amount on line l from cell ci on (the label's
// own rest first when it is the only text).
func (r *reader) lastNumber(l *line, ci int, rest string) (string, Position, bool) {
	for k := len(l.cells) - 1; k > ci; k-- {
		c := l.cells[k]
		if v, ok := r.cv.amount(c.text); ok { // "2 418,50", "€32 389,76"
			return v, l.at(c.col, c.end, ""), true
		}
		for w := len(c.words) - 1; w >= 0; w-- {
			if v, ok := r.cv.amount(c.words[w].text); ok {
				return v, l.at(c.words[w].col, c.words[w].end, ""), true
			}
		}
	}
	if rest != "" {
		c := l.cells[ci]
		if v, ok := r.trailingAmount(rest); ok {
			return v, l.at(c.col, c.end, ""), true
		}
	}
	return "", Position{}, false
}

// trailingAmount is the amount at the end of a label's cell ("20 % :
// 7 863,55 €"): a currency after it is dropped, and a number grouped by
// spaces spans up to three words.
func (r *reader) trailingAmount(rest string) (string, bool) {
	f := strings.Fields(rest)
	for len(f) > 0 {
		last := f[len(f)-1]
		if !isoCodes[last] && !strings.ContainsAny(last, "$€£₹") || digits(last) > 0 {
			break
		}
		f = f[:len(f)-1]
	}
	for k := min(3, len(f)); k >= 1; k-- {
		s := strings.Join(f[len(f)-k:], " ")
		if k > 1 && !spaceGrouped.MatchString(s) {
			continue
		}
		if v, ok := r.cv.amount(s); ok {
			return v, true
		}
	}
	return "", false
}

// totalsLine reports whether a line inside the table is a totals line
// (the table ends there): a totals label, and a number under the table's
// number columns ("Verpackung à 100 Stück" in a description is not one).
func (r *reader) totalsLine(h *header, l *line) bool {
	numCol := 1 << 30
	for _, c := range h.cols {
		if numericKinds[c.kind] {
			numCol = min(numCol, c.col)
		}
	}
	last := -1
	for _, c := range l.cells {
		for _, w := range c.words {
			if _, ok := r.cv.amount(w.text); ok {
				last = w.end
			}
		}
	}
	if last >= 0 && last < numCol {
		return false
	}
	for _, c := range l.cells {
		for _, tk := range totalKinds {
			if _, rest, ok := matchLabel(tk.re, c); ok && len(strings.Fields(rest)) <= 3 {
				return true
			}
		}
	}
	return false
}

// readTotals reads every totals line outside the item table.
func (r *reader) readTotals(tableFirst, tableEnd int) []total {
	var out []total
	for i, l := range r.d.lines {
		if i >= tableFirst && i < tableEnd {
			continue
		}
		if t, ok := r.totalOf(l); ok {
			if r.underQuantity(t) {
				t.kind = "quantity" // "Total   25,542.000" under the quantity column
			}
			if i < tableFirst && t.kind != "gross" {
				// Above the table "Freight" and "Tax" are terms and ids
				// (ship via, tax number); only a total is printed there.
				continue
			}
			out = append(out, t)
			r.consider("totals."+t.kind, t.value, t.at, true, "label "+t.at.Label)
		}
	}
	return out
}

// underQuantity reports whether a total's number stands under the item
// table's quantity column, left of its money columns: a total quantity.
func (r *reader) underQuantity(t total) bool {
	if r.hdr == nil || t.at.Len == 0 {
		return false
	}
	q, p, a := r.hdr.index(colQty), r.hdr.index(colPrice), r.hdr.index(colAmount)
	if q < 0 || (p < 0 && a < 0) {
		return false
	}
	qc := r.hdr.cols[q]
	end := t.at.Col + t.at.Len
	return overlaps(t.at.Col, end, qc.col, qc.end, 2) && (a < 0 || end < r.hdr.cols[a].col)
}

// sums are the printed totals by kind.
type sums struct {
	net, gross, qty []total
	tax, charges    *big.Rat
	taxAt, chAt     []total
}

func group(ts []total) sums {
	s := sums{tax: new(big.Rat), charges: new(big.Rat)}
	for _, t := range ts {
		v := order.Rat(t.value)
		switch t.kind {
		case "net":
			s.net = append(s.net, t)
		case "gross":
			s.gross = append(s.gross, t)
		case "quantity":
			s.qty = append(s.qty, t)
		case "tax":
			s.tax.Add(s.tax, v)
			s.taxAt = append(s.taxAt, t)
		case "charge":
			s.charges.Add(s.charges, v)
			s.chAt = append(s.chAt, t)
		}
	}
	return s
}

// closeTotals proves the lines against the printed totals and fills the
// order's totals. It returns an error naming the numbers when they do not
// close.
func closeTotals(o *order.Order, lines *big.Rat, priced bool, ts []total) error {
	s := group(ts)
	tol := big.NewRat(1, 100)
	for _, q := range s.qty {
		if sum := qtySum(o); !closeTo(sum, order.Rat(q.value), tol) {
			return fmt.Errorf("the quantities add up to %s, the document's total quantity is %s", sum.FloatString(3), q.value)
		}
		o.Totals.Quantity = q.value
	}
	if priced && len(s.net)+len(s.gross) == 0 {
		return fmt.Errorf("the lines print prices but no amounts, and no total proves them")
	}
	if lines == nil {
		if len(s.net)+len(s.gross) > 0 {
			return fmt.Errorf("the document prints totals but its lines print no amounts to prove them")
		}
		return nil
	}
	net := matching(s.net, lines, tol)
	for _, n := range s.net {
		if !closeTo(order.Rat(n.value), lines, tol) {
			return fmt.Errorf("the lines add up to %s, the document's net total is %s", lines.FloatString(2), n.value)
		}
	}
	base := lines
	if net != nil {
		o.Totals.NetAmount = net.value
		base = order.Rat(net.value)
	}
	if len(s.gross) == 0 {
		if len(s.taxAt)+len(s.chAt) > 0 {
			// Tax or charges are added to something: a total the
			// reader did not place.
			return fmt.Errorf("the document prints tax or charges but no total the reader can place")
		}
		return nil
	}
	// The last total printed is the order's; one before it is a table
	// total row and must be the lines' sum (or the same total again).
	final := s.gross[len(s.gross)-1]
	for _, g := range s.gross[:len(s.gross)-1] {
		if v := order.Rat(g.value); !closeTo(v, lines, tol) && !closeTo(v, order.Rat(final.value), tol) {
			return fmt.Errorf("the document prints a total %s that is neither the lines' sum %s nor its final total %s", g.value, lines.FloatString(2), final.value)
		}
	}
	for _, c := range [][2]*big.Rat{{s.tax, s.charges}, {s.tax, new(big.Rat)}, {new(big.Rat), s.charges}, {new(big.Rat), new(big.Rat)}} {
		want := new(big.Rat).Add(base, c[0])
		want.Add(want, c[1])
		if !closeTo(want, order.Rat(final.value), tol) {
			continue
		}
		if c[0].Sign() == 0 && c[1].Sign() == 0 && s.tax.Sign() != 0 {
			break // a tax is printed, so a total without it is not the gross
		}
		o.Totals.GrossAmount = final.value
		if c[0].Sign() != 0 {
			o.Totals.TaxAmount = c[0].FloatString(2)
		}
		if c[1].Sign() != 0 {
			o.Totals.ExtraCharges = c[1].FloatString(2)
		}
		if net == nil {
			o.Totals.NetAmount = lines.FloatString(2)
		}
		return nil
	}
	return fmt.Errorf("the lines add up to %s (tax %s, charges %s), the document's total is %s",
		lines.FloatString(2), s.tax.FloatString(2), s.charges.FloatString(2), final.value)
}

// matching is the first printed total equal to want.
func matching(ts []total, want, tol *big.Rat) *total {
	for i := range ts {
		if closeTo(order.Rat(ts[i].value), want, tol) {
			return &ts[i]
		}
	}
	return nil
}

func qtySum(o *order.Order) *big.Rat {
	s := new(big.Rat)
	for _, it := range o.Items {
		if q := order.Rat(it.Quantity); q != nil {
			s.Add(s, q)
		}
	}
	return s
}
