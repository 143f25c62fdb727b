package draft

import (
	"context"
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// sameCanonical compares an extracted value with the reader's canonical
// value.
func sameCanonical(got any, want string) bool {
	switch x := got.(type) {
	case order.Date:
		return x.String() == want
	case template.Float:
		return sameNumber(x.Dec, want)
	case string:
		return strings.TrimSpace(x) == want
	}
	return false
}

// chooseTable keeps the lines block that reads the reader's items on
// every sample: the block written from the reader's rows, else the column
// drafter's table (from the column headings alone), else the one that
// reads more of them.
func (b *builder) chooseTable(ctx context.Context) error {
	type cand struct {
		t    *table
		from string
	}
	cands := []cand{{b.readerTab, "written from the generic reader's rows and columns"},
		{b.table, "the column drafter's table (from the column headings)"}}
	fewest := -1
	var best cand
	for _, c := range cands {
		if c.t == nil {
			continue
		}
		diffs, err := b.tableDiffs(ctx, c.t)
		if err != nil {
			return err
		}
		if fewest < 0 || len(diffs) < fewest {
			fewest, best = len(diffs), c
		}
		if len(diffs) == 0 {
			break
		}
	}
	b.table, b.tableFrom = best.t, best.from
	switch {
	case fewest > 0:
		b.tableFrom += "; it does not read all of the generic reader's items (see the read-back)"
	case best.t == b.table && best.t != b.readerTab:
		b.tableFrom += ", which reads the generic reader's items"
	}
	return nil
}

// tableDiffs reads the samples with a template holding only table t and
// lists where its items differ from the reader's.
func (b *builder) tableDiffs(ctx context.Context, t *table) ([]string, error) {
	var w strings.Builder
	w.WriteString("keywords: ['.']\nfields:\n")
	writeLines(&w, t)
	b.writeOptions(&w)
	w.WriteString("docintake:\n  name: lines\n  checks: false\n")
	tpl, err := template.Parse("lines.yml", []byte(w.String()))
	if err != nil {
		return nil, fmt.Errorf("draft: the drafted lines block does not load (a bug): %w\n%s", err, w.String())
	}
	if len(tpl.Problems) > 0 {
		return nil, fmt.Errorf("draft: the drafted lines block has problems (a bug): %v\n%s", tpl.Problems[0], w.String())
	}
	var diffs []string
	for k, s := range b.samples {
		res, err := tpl.Extract(ctx, s.Text, nil)
		if err != nil {
			return nil, fmt.Errorf("draft: extract %s: %w", s.Name, err)
		}
		o, _, _ := tpl.Order(ctx, res, nil, "", nil)
		if o == nil {
			o = &order.Order{}
		}
		diffs = append(diffs, itemDiffs(o.Items, b.readings[k].res.Order.Items, b.ref)...)
	}
	return diffs, nil
}

// itemDiffs lists the item values a reading of the draft has other than
// the reader's: quantity, price, price basis, discount and line amount.
func itemDiffs(got, want []order.Item, ref string) []string {
	if len(got) != len(want) {
		return []string{fmt.Sprintf("items: %d read, %s has %d", len(got), ref, len(want))}
	}
	var out []string
	for i, w := range want {
		g := got[i]
		for _, v := range [][3]string{{"quantity", g.Quantity, w.Quantity}, {"unit_price", g.UnitPrice, w.UnitPrice},
			{"price_basis_quantity", g.PriceBasisQuantity, w.PriceBasisQuantity},
			{"discount_percent", g.DiscountPercent, w.DiscountPercent}, {"line_amount", g.LineAmount, w.LineAmount}} {
			if v[1] == v[2] || sameNumber(v[1], v[2]) || v[0] == "price_basis_quantity" && basisOne(v[1]) && basisOne(v[2]) {
				continue
			}
			out = append(out, fmt.Sprintf("items[%d].%s: %s (%s: %s)", i, v[0], orNone(v[1]), ref, orNone(v[2])))
		}
	}
	return out
}

// basisOne reports a price per one unit, printed or not.
func basisOne(s string) bool { return s == "" || sameNumber(s, "1") }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// readBack lists where the draft's reading of sample k differs from the
// reader's: the outcome, order id, dates, currency, the printed totals and
// every item's numbers.
func (b *builder) readBack(o *order.Order, out string, k int) []string {
	r := b.readings[k]
	want := r.res.Order
	if o == nil {
		o = &order.Order{}
	}
	var diffs []string
	if out != string(template.OutcomeSuccess) {
		diffs = append(diffs, "outcome: "+out)
	}
	for _, v := range [][3]string{{"order_id", o.ID, want.ID}, {"date", dateText(o.IssueDate), dateText(want.IssueDate)},
		{"delivery_date", dateText(o.DeliveryDate), dateText(want.DeliveryDate)}, {"currency", o.Currency, want.Currency}} {
		if v[1] != v[2] {
			diffs = append(diffs, fmt.Sprintf("%s: %s (%s: %s)", v[0], orNone(v[1]), b.ref, orNone(v[2])))
		}
	}
	got := map[string]string{"total_net": o.Totals.NetAmount, "total_tax": o.Totals.TaxAmount, "total_gross": o.Totals.GrossAmount,
		"total_extra_charges": o.Totals.ExtraCharges, "total_quantity": o.Totals.Quantity}
	for _, name := range []string{"total_net", "total_tax", "total_extra_charges", "total_gross", "total_quantity"} {
		cs, v := r.usedTotals(name)
		if len(cs) == 0 || sameNumber(got[name], v) {
			continue // a total the reader adds up is not printed: the report says so
		}
		diffs = append(diffs, fmt.Sprintf("%s: %s (%s: %s)", name, orNone(got[name]), b.ref, v))
	}
	return append(diffs, itemDiffs(o.Items, want.Items, b.ref)...)
}

// readAs is how the read-back names its reference.
func readAs(ref string) string {
	if ref == confirmedRef {
		return "confirmed"
	}
	return ref + " read it"
}

func dateText(d order.Date) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

// readerReport says how the draft was built (reading) and, per sample,
// whether it reads the sample back as the reader did or where it does not
// (back); ok is set when it reads every proven sample back.
func (b *builder) readerReport(d *Draft) (reading string, back []string, ok bool) {
	if !b.proven() {
		return "reading: the generic reader does not prove " + strings.Join(b.unproven, ", ") +
			"; drafted from labels and column headings instead (check every value)", nil, false
	}
	reading = "reading: the generic reader proves every sample (line arithmetic, totals, one order number); the draft freezes its reading"
	if b.ref == confirmedRef {
		reading = "reading: anchored on the order a person confirmed for each sample; the draft freezes the generic reader's reading of those values"
		for _, n := range b.truthNotes {
			reading += "\n  " + n
		}
	}
	ok = true
	for k, oc := range d.Outcomes {
		detail := string(oc.Status)
		if oc.Detail != "" && oc.Status != template.OutcomeSuccess {
			detail += ": " + oc.Detail
		}
		diffs := b.readBack(oc.Order, detail, k)
		if len(diffs) == 0 {
			back = append(back, fmt.Sprintf("read back: %s as %s (order id, dates, currency, totals, %d items)",
				oc.Sample, readAs(b.ref), len(b.readings[k].res.Order.Items)))
			continue
		}
		ok = false
		back = append(back, fmt.Sprintf("read back: %s NOT as %s:", oc.Sample, readAs(b.ref)))
		for _, x := range diffs {
			back = append(back, "  "+x)
		}
	}
	return reading, back, ok
}

// ReadsBack reports whether the draft is built on the generic reader's
// proven readings and reads every sample back exactly as the reader did
// (with Sample.Truth: exactly as the person confirmed it).
func (d *Draft) ReadsBack() bool { return d.readsBack }
