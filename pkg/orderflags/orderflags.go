// Package orderflags checks an order read exactly against what the supplier
// knows (issue 28): each line's price against the client's price list, and
// the requested delivery dates against the order date and the day the PO
// arrived. What does not fit is a Flag with the expected and the printed
// value; nothing is corrected. Pure: the processor hands it the order, the
// price list entries and the arrival time.
package orderflags

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pricelist"
)

// Kinds of flags (the label of docintake_processor_flags_total).
const (
	// KindPrice: the line's price deviates from its price list entry by
	// more than the entry's tolerance.
	KindPrice = "price"
	// KindPriceNoEntry: the price list names the line's article, but no
	// entry applies (another currency or unit, or none valid on the order
	// date), so the printed price could not be checked.
	KindPriceNoEntry = "price_no_entry"
	// KindDeliveryBeforeOrder: a requested delivery date before the order
	// date.
	KindDeliveryBeforeOrder = "delivery_date_before_order"
	// KindDeliveryPast: a requested delivery date already past on the day
	// the PO arrived.
	KindDeliveryPast = "delivery_date_past"
)

// Kinds lists every kind.
var Kinds = []string{KindPrice, KindPriceNoEntry, KindDeliveryBeforeOrder, KindDeliveryPast}

// Flag is one finding about an order.
type Flag struct {
	Kind string
	// Line is the order line (1-based place in the order), 0 for the
	// order's header; Position and Article name it as printed.
	Line     int
	Position string
	Article  string
	// Expected is what the supplier's data says (the price list's price in
	// the line's price basis, the earliest acceptable date); Printed is
	// what the PO printed.
	Expected string
	Printed  string
	// Message says it all in one sentence, for people.
	Message string
}

// Remark is the flag as the openTRANS REMARKS carries it.
func (f Flag) Remark() string { return "docintake flag " + f.Kind + ": " + f.Message }

// Check returns the flags of o: its delivery dates (Dates) and its prices
// (Prices), header first, then by line.
func Check(o *order.Order, entries []pricelist.Entry, received time.Time) []Flag {
	flags := Dates(o, received)
	return append(flags, Prices(o, entries, received)...)
}

// Apply adds each flag's Remark to the remarks of its line (a header flag
// to the order's remarks), after what the PO printed.
func Apply(o *order.Order, flags []Flag) {
	for _, f := range flags {
		if f.Line >= 1 && f.Line <= len(o.Items) {
			it := &o.Items[f.Line-1]
			it.Remarks = append(it.Remarks, f.Remark())
			continue
		}
		o.Remarks = append(o.Remarks, f.Remark())
	}
}

// Articles returns the article numbers a price check of o looks up: those
// of lines with a printed price. Empty when there is nothing to check.
func Articles(o *order.Order) []string {
	var out []string
	for _, it := range o.Items {
		if it.UnitPrice == "" {
			continue
		}
		for _, a := range []string{it.SupplierArticleID, it.BuyerArticleID} {
			if k := pricelist.ArticleKey(a); k != "" {
				out = append(out, k)
			}
		}
	}
	return out
}

// lineName is "line 2 (position 20, N-2)" for messages.
func lineName(n int, it order.Item, article string) string {
	var parts []string
	if p := strings.TrimSpace(it.Position); p != "" && p != fmt.Sprint(n) {
		parts = append(parts, "position "+p)
	}
	if article != "" {
		parts = append(parts, article)
	}
	if len(parts) == 0 {
		return fmt.Sprintf("line %d", n)
	}
	return fmt.Sprintf("line %d (%s)", n, strings.Join(parts, ", "))
}

// Dates flags requested delivery dates (the header's, and a line's that
// differs from it) before the order date, or, failing that, before the day
// the PO arrived (received, in UTC).
func Dates(o *order.Order, received time.Time) []Flag {
	arrived := order.DateOf(received.UTC())
	check := func(d order.Date, line int, it order.Item) []Flag {
		if d.IsZero() {
			return nil
		}
		where := "the order's requested delivery date"
		art := firstArticle(it)
		if line > 0 {
			where = lineName(line, it, art) + ": requested delivery date"
		}
		f := Flag{Line: line, Position: strings.TrimSpace(it.Position), Article: art, Printed: d.String()}
		switch {
		case !o.IssueDate.IsZero() && d.String() < o.IssueDate.String():
			f.Kind, f.Expected = KindDeliveryBeforeOrder, o.IssueDate.String()
			f.Message = fmt.Sprintf("%s %s is before the order date %s", where, d, o.IssueDate)
		case !received.IsZero() && d.String() < arrived.String():
			f.Kind, f.Expected = KindDeliveryPast, arrived.String()
			f.Message = fmt.Sprintf("%s %s had passed when the order arrived on %s", where, d, arrived)
		default:
			return nil
		}
		return []Flag{f}
	}
	flags := check(o.DeliveryDate, 0, order.Item{})
	for i, it := range o.Items {
		if it.DeliveryDate != o.DeliveryDate {
			flags = append(flags, check(it.DeliveryDate, i+1, it)...)
		}
	}
	return flags
}

func firstArticle(it order.Item) string {
	for _, a := range []string{it.SupplierArticleID, it.BuyerArticleID} {
		if a = strings.TrimSpace(a); a != "" {
			return a
		}
	}
	return ""
}

// Prices flags each line with a printed price whose article the price
// list names: outside the tolerance of the entry that applies (KindPrice),
// or with no entry applying (KindPriceNoEntry). Lines without a price or
// with an article the list does not name are not checked. Entries must be
// valid on the order date (the day the PO arrived when it prints none).
func Prices(o *order.Order, entries []pricelist.Entry, received time.Time) []Flag {
	if len(entries) == 0 {
		return nil
	}
	on := o.IssueDate
	if on.IsZero() {
		on = order.DateOf(received.UTC())
	}
	var flags []Flag
	for i, it := range o.Items {
		if it.UnitPrice == "" {
			continue
		}
		m := pricelist.Find(entries, pricelist.Query{Articles: []string{it.SupplierArticleID, it.BuyerArticleID},
			Currency: o.Currency, Unit: it.Unit, Date: on})
		if !m.Listed {
			continue
		}
		f := Flag{Line: i + 1, Position: strings.TrimSpace(it.Position), Article: m.Article, Printed: it.UnitPrice}
		if m.Entry == nil {
			f.Kind = KindPriceNoEntry
			f.Message = fmt.Sprintf("%s: price %s %s not checked: the price list has no entry for %s per %s valid on %s (%s)",
				lineName(i+1, it, m.Article), it.UnitPrice, o.Currency, orNone(o.Currency), pricelist.UnitKey(it.Unit), on,
				describe(m.Others))
			flags = append(flags, f)
			continue
		}
		if pf, ok := priceFlag(f, i+1, it, o.Currency, *m.Entry); ok {
			flags = append(flags, pf)
		}
	}
	return flags
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "no currency"
	}
	return s
}

// describe lists entries that do not apply, for a message.
func describe(es []pricelist.Entry) string {
	parts := make([]string, 0, min(len(es), 5))
	for i, e := range es {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(es)-5))
			break
		}
		unit := e.UnitCode()
		if unit == "" {
			unit = "any unit"
		}
		parts = append(parts, fmt.Sprintf("%s per %s %s, line %d", e.Currency, unit, validity(e), e.Line))
	}
	return "the list has " + strings.Join(parts, "; ")
}

func validity(e pricelist.Entry) string {
	if e.ValidFrom.IsZero() && e.ValidTo.IsZero() {
		return "always"
	}
	from, to := e.ValidFrom.String(), e.ValidTo.String()
	if from == "" {
		from = "…"
	}
	if to == "" {
		to = "…"
	}
	return from + ".." + to
}

// listName names the list an entry comes from.
func listName(e pricelist.Entry) string {
	if e.Buyer == "" {
		return fmt.Sprintf("price list for every buyer, line %d", e.Line)
	}
	return fmt.Sprintf("price list of %s, line %d", e.Buyer, e.Line)
}

// rat is a canonical decimal's value, def when empty or not a number.
func rat(s, def string) *big.Rat {
	if r := order.Rat(s); r != nil {
		return r
	}
	return order.Rat(def)
}
