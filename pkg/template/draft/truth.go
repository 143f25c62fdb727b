package draft

import (
	"context"
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// A sample with a Truth (the order a person confirmed in review, issue 27)
// is drafted on that order instead of the generic reader's verdict: the
// reader's reading is anchored on it. Each header value the person
// confirmed is taken where the reader read it, or where the reader
// considered it (a candidate it dropped, under another label); the items
// keep the reader's positions when their numbers are the confirmed ones;
// the totals are the confirmed ones, found on the totals lines the reader
// considered. The reading then counts as proven with the confirmed order
// as what it proves, so the draft is frozen from it and read back against
// the confirmed values, field by field.

// readAnchored reads text with the generic reader anchored on truth. A
// header value the reader considers that is not the confirmed one (a
// second order number it cannot choose from) is blanked out of the text it
// reads, in place, and the text read again, so that the reader gets past
// it to the rest of the order; positions stay those of text.
func readAnchored(ctx context.Context, text string, truth *order.Order) (*generic.Result, []string, error) {
	want := headerTruth(truth)
	masked := text
	for range 4 {
		res, err := generic.Read(ctx, masked, generic.Options{Debug: true})
		if err != nil {
			return nil, nil, err
		}
		var others []generic.Position
		for _, c := range res.Candidates {
			if w := want[c.Field]; w != "" && c.Value != w && c.At.Page > 0 {
				others = append(others, c.At)
			}
		}
		if res.Outcome.Status == template.OutcomeSuccess || len(others) == 0 {
			a, notes := anchorTruth(res, truth)
			return a, notes, nil
		}
		masked = blankOut(masked, others)
	}
	res, err := generic.Read(ctx, masked, generic.Options{Debug: true})
	if err != nil {
		return nil, nil, err
	}
	a, notes := anchorTruth(res, truth)
	return a, notes, nil
}

// headerTruth are the confirmed header values by the reader's field names.
func headerTruth(truth *order.Order) map[string]string {
	return map[string]string{"order_id": truth.ID, "order_date": dateText(truth.IssueDate),
		"delivery_date": dateText(truth.DeliveryDate), "currency": truth.Currency}
}

// blankOut replaces the text at each position with blanks of its length.
func blankOut(text string, at []generic.Position) string {
	pages := strings.Split(text, "\f")
	for _, p := range at {
		if p.Page < 1 || p.Page > len(pages) {
			continue
		}
		lines := strings.Split(pages[p.Page-1], "\n")
		if p.Line < 0 || p.Line >= len(lines) {
			continue
		}
		rs := []rune(lines[p.Line])
		for i := p.Col; i < p.Col+p.Len && i < len(rs); i++ {
			rs[i] = ' '
		}
		lines[p.Line] = string(rs)
		pages[p.Page-1] = strings.Join(lines, "\n")
	}
	return strings.Join(pages, "\f")
}

// confirmedRef names what a draft with truths is read back against.
const confirmedRef = "the confirmed order"

// anchorTruth returns the reader's result anchored on truth, and notes on
// what of it the reader's reading does not show (for the report).
func anchorTruth(res *generic.Result, truth *order.Order) (*generic.Result, []string) {
	out := *res
	o := *truth
	o.Items = append([]order.Item(nil), truth.Items...)
	out.Order, out.Outcome = &o, &template.Outcome{Status: template.OutcomeSuccess}
	want := headerTruth(truth)
	itemsOK := sameItems(res.Order, truth)
	out.Fields = nil
	for _, f := range res.Fields {
		_, _, isItem := itemField(f.Name)
		if _, isHeader := want[f.Name]; isHeader || isItem && !itemsOK {
			continue
		}
		out.Fields = append(out.Fields, f)
	}
	var notes []string
	for _, name := range []string{"order_id", "order_date", "delivery_date", "currency"} {
		if want[name] == "" {
			continue
		}
		if f, ok := pickValue(res, name, want[name]); ok {
			out.Fields = append(out.Fields, f)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: the confirmed %q is not printed where the generic reader looks for one (next to or under a label)", name, want[name]))
	}
	if !itemsOK {
		notes = append(notes, fmt.Sprintf("items: the generic reader's rows are not the %d confirmed items (count, quantity, price or amount): the table is drafted from the column headings", len(truth.Items)))
	}
	return &out, notes
}

// pickValue is the reader's kept field name with value want, else a
// candidate it considered with that value.
func pickValue(res *generic.Result, name, want string) (generic.Field, bool) {
	for _, f := range res.Fields {
		if f.Name == name && f.Value == want {
			return f, true
		}
	}
	for _, c := range res.Candidates {
		if c.Field == name && c.Value == want && c.At.Page > 0 {
			return generic.Field{Name: name, Value: want, At: c.At}, true
		}
	}
	return generic.Field{}, false
}

// sameItems reports whether the reader read the confirmed items: as many,
// with the same quantities, prices and amounts.
func sameItems(read *order.Order, truth *order.Order) bool {
	if read == nil || len(read.Items) != len(truth.Items) || len(truth.Items) == 0 {
		return false
	}
	same := func(a, b string) bool { return a == b || sameNumber(a, b) }
	for i, w := range truth.Items {
		g := read.Items[i]
		if !same(g.Quantity, w.Quantity) || !same(g.UnitPrice, w.UnitPrice) || !same(g.LineAmount, w.LineAmount) {
			return false
		}
	}
	return true
}
