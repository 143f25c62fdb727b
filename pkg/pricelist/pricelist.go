// Package pricelist is a client's price list (issue 28): the CSV a client
// imports per buyer, validated row by row, and the choice of the entry that
// prices an order line. It is pure: the store keeps the entries, the
// processor's flags compare them with what a PO printed.
package pricelist

import (
	"strings"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

// Columns are the CSV's header, exactly and in this order.
var Columns = []string{"article", "currency", "unit_price", "price_basis", "unit", "valid_from", "valid_to", "tolerance_pct"}

// Header is Columns as the CSV's first line.
var Header = strings.Join(Columns, ",")

// Limits of one import; the API refuses a larger body with 413 before
// reading it. 100,000 rows of a typical list are about 6 MB.
const (
	DefaultMaxBytes = 16 << 20
	DefaultMaxRows  = 100_000
	// MaxProblems bounds the problems an invalid file reports (the count
	// of the others is given).
	MaxProblems = 50
)

// Entry is one row of a price list: the price of an article in a currency
// and unit, per PriceBasis units, valid from ValidFrom to ValidTo
// (inclusive; zero: open), with the tolerance a printed price may deviate.
type Entry struct {
	// Buyer is the list's buyer ("": the client's list for every buyer).
	Buyer string
	// Line is the entry's line in the imported CSV (the header is line 1).
	Line         int
	Article      string
	Currency     string // ISO 4217, upper case
	UnitPrice    string // canonical decimal
	PriceBasis   string // canonical decimal, "1" when the CSV left it empty
	Unit         string // as imported; "" applies to every unit
	ValidFrom    order.Date
	ValidTo      order.Date
	TolerancePct string // canonical decimal, "0" when the CSV left it empty
}

// ArticleKey is how an article number is compared: white space collapsed
// and upper case, so that "ab 100" and "AB 100" are one article.
func ArticleKey(s string) string { return strings.ToUpper(strings.Join(strings.Fields(s), " ")) }

// UnitKey is how a unit is compared: its UN/ECE Recommendation 20 code as
// the openTRANS writer writes it ("Stk.", "pcs" and "C62" are one unit),
// or the unit upper-cased when no code is known.
func UnitKey(s string) string {
	if code, ok := opentrans.UnitCode(s); ok {
		return code
	}
	return strings.ToUpper(strings.TrimSpace(s))
}

// UnitCode is the entry's unit as compared ("" when it applies to every
// unit).
func (e Entry) UnitCode() string {
	if strings.TrimSpace(e.Unit) == "" {
		return ""
	}
	return UnitKey(e.Unit)
}

// ValidOn reports whether d lies within the entry's validity.
func (e Entry) ValidOn(d order.Date) bool {
	s := d.String()
	return (e.ValidFrom.IsZero() || e.ValidFrom.String() <= s) && (e.ValidTo.IsZero() || s <= e.ValidTo.String())
}

// Query is an order line to price: its article numbers (the supplier's
// first: the supplier's own data wins), the order's currency, the line's
// unit and the date the price must be valid on (the order date).
type Query struct {
	Articles []string
	Currency string
	Unit     string
	Date     order.Date
}

// Match is what the price list says about a line: Listed is false when no
// entry names one of its articles; Entry is set when an entry applies.
type Match struct {
	Listed bool
	// Article is the article number the entries were found by.
	Article string
	Entry   *Entry
	// Others are the listed article's entries that do not apply (another
	// currency, unit or validity), for the flag's message.
	Others []Entry
}

// Find chooses the entry pricing q among entries (of the client's lists for
// the order's buyer and for every buyer). An article the buyer's own list
// names is priced by that list alone; otherwise by the client-wide list. An
// entry applies when its currency is the order's, its unit is the line's
// (or it names none) and it is valid on q.Date. Imports refuse overlapping
// entries, so at most one applies.
func Find(entries []Entry, q Query) Match {
	for _, a := range q.Articles {
		key := ArticleKey(a)
		if key == "" {
			continue
		}
		cands := forArticle(entries, key)
		if len(cands) == 0 {
			continue
		}
		m := Match{Listed: true, Article: strings.TrimSpace(a)}
		unit := UnitKey(q.Unit)
		for i := range cands {
			e := cands[i]
			if e.Currency == strings.ToUpper(strings.TrimSpace(q.Currency)) &&
				(e.UnitCode() == "" || e.UnitCode() == unit) && e.ValidOn(q.Date) {
				m.Entry = &e
				return m
			}
		}
		m.Others = cands
		return m
	}
	return Match{}
}

// forArticle returns the entries of article key: the buyer's own list's
// when it names the article, else the client-wide list's.
func forArticle(entries []Entry, key string) []Entry {
	var own, all []Entry
	for _, e := range entries {
		if ArticleKey(e.Article) != key {
			continue
		}
		if e.Buyer != "" {
			own = append(own, e)
		} else {
			all = append(all, e)
		}
	}
	if len(own) > 0 {
		return own
	}
	return all
}
