// Package units expresses an order's lines in the supplier's units of
// measure (issue 28). A buyer orders "2 CS" or "5 Stk."; the supplier's ERP
// needs a UN/ECE Recommendation 20 code from the BMEcat 2005 list (what
// openTRANS ORDER_UNIT takes) and, where the supplier sells in another unit,
// the quantity and price in that unit (a case of 12 → 12 pieces).
//
// Each printed unit is decided by, in this order: the client's unit table
// for the line's article, the client's unit table for every article, the
// built-in spellings (opentrans.UnitCode: "Stk." → C62, "kg" → KGM, a code
// of the 2005 list as printed). A unit none of them knows is unresolved: the
// caller defers the document with mapping_not_resolved instead of guessing
// (writing 12 boxes as 12 pieces). A line without a unit is left as it is.
//
// A conversion never changes what the buyer pays: the line amount stays the
// printed one, and quantity × unit price ÷ price basis is exactly the same
// before and after (Apply refuses to return an order where it is not).
package units

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

// ErrConversion marks a conversion Apply refused because it would change a
// line's amount: a bug to report, never the document's fault.
var ErrConversion = errors.New("unit conversion")

// Tables recorded in order.PrintedUnit.Table.
const (
	TableClient  = "client"
	TableBuiltin = "builtin"
)

// Rule is one row of a client's unit table: one Unit of the buyer (for
// Article, or every article when Article is "") is Factor units Code of the
// supplier.
type Rule struct {
	Unit    string // the buyer's unit as written in the table ("CS", "Karton")
	Article string // the line's supplier or buyer article number; "" = every article
	Code    string // the supplier's unit, a code of the BMEcat 2005 list
	Factor  string // supplier units per buyer unit, a canonical decimal > 0
}

// Key is the unit as the table is keyed: lower case, no white space, no
// trailing dot ("Stk." and "STK" are one unit).
func Key(unit string) string { return opentrans.UnitKey(unit) }

// NewRule validates a row of a unit table and normalises it: the code is a
// code of the 2005 list as written ("ST" is the sheet here, not the Stück),
// or a unit the built-in spellings know ("PCE", "H87", "pcs" → C62; "XBX" →
// BX), because ORDER_UNIT takes only the 2005 list; the factor is a decimal
// with a point, above 0, and 1 when empty.
func NewRule(unit, article, code, factor string) (Rule, error) {
	r := Rule{Unit: strings.TrimSpace(unit), Article: strings.TrimSpace(article)}
	if Key(r.Unit) == "" {
		return Rule{}, fmt.Errorf("empty unit")
	}
	c, known := strings.TrimSpace(code), true
	if !opentrans.IsUnitCode(c) {
		c, known = opentrans.UnitCode(code)
	}
	if !known || strings.TrimSpace(code) == "" {
		return Rule{}, fmt.Errorf("code %q is not a unit of the BMEcat 2005 list (UN/ECE Rec 20, such as C62, KGM, MTR, CS, PK)", code)
	}
	r.Code = c
	f := strings.TrimSpace(factor)
	if f == "" {
		f = "1"
	}
	cf, ok := order.CanonicalDecimal(f)
	if rf := order.Rat(cf); !ok || rf == nil || rf.Sign() <= 0 {
		return Rule{}, fmt.Errorf("factor %q is not a decimal above 0 (with a point: 0.5, 12)", factor)
	}
	r.Factor = cf
	return r, nil
}

// Keys are the distinct keys of the units o's lines print: the part of the
// client's table Apply needs.
func Keys(o *order.Order) []string {
	var keys []string
	seen := map[string]bool{}
	for _, it := range o.Items {
		if k := Key(it.Unit); k != "" && it.AsPrinted == nil && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// Unresolved lists the lines whose unit neither the client's table nor the
// built-in spellings know.
type Unresolved []Line

// Line is one line with an unknown unit.
type Line struct {
	Line     int // 1-based place in the order
	Position string
	Unit     string
}

// Detail says which units to add, for the document's history and the
// deferral's detail.
func (u Unresolved) Detail() string {
	parts := make([]string, len(u))
	for i, l := range u {
		parts[i] = fmt.Sprintf("%q (line %d, position %s)", l.Unit, l.Line, l.Position)
	}
	return "no unit mapping for " + strings.Join(parts, ", ") +
		": not in the client's unit table (intakectl units import) nor a known spelling of a UN/ECE Rec 20 unit"
}

// Apply expresses every line of o that prints a unit in the supplier's unit,
// with the client's rules (rules for other units are ignored). When a unit
// is unknown nothing is changed and the unresolved lines are returned. A
// line converted before (AsPrinted set) is left alone, so Apply may run
// twice. The error (ErrConversion) is a conversion that would change a
// line's amount: a bug, never the document's fault.
func Apply(o *order.Order, rules []Rule) (Unresolved, error) {
	type decision struct {
		code, factor, table string
	}
	decided := make([]*decision, len(o.Items))
	var missing Unresolved
	for i, it := range o.Items {
		if it.AsPrinted != nil || Key(it.Unit) == "" {
			continue
		}
		if r, ok := match(rules, &it); ok {
			decided[i] = &decision{r.Code, r.Factor, TableClient}
			continue
		}
		code, known := opentrans.UnitCode(it.Unit)
		if !known {
			missing = append(missing, Line{Line: i + 1, Position: it.Position, Unit: strings.TrimSpace(it.Unit)})
			continue
		}
		decided[i] = &decision{code, "1", TableBuiltin}
	}
	if len(missing) > 0 {
		return missing, nil
	}
	for i, d := range decided {
		if d == nil {
			continue
		}
		if err := convert(&o.Items[i], d.code, d.factor, d.table); err != nil {
			return nil, fmt.Errorf("%w: line %d (position %s): %w", ErrConversion, i+1, o.Items[i].Position, err)
		}
	}
	return nil, nil
}

// match finds the client's rule for the line's unit: one for its supplier
// article number, then one for its buyer article number, then one for
// every article.
func match(rules []Rule, it *order.Item) (Rule, bool) {
	key := Key(it.Unit)
	for _, article := range []string{it.SupplierArticleID, it.BuyerArticleID} {
		if a := ArticleKey(article); a != "" {
			if r, ok := find(rules, key, a); ok {
				return r, true
			}
		}
	}
	return find(rules, key, "")
}

func find(rules []Rule, key, article string) (Rule, bool) {
	for _, r := range rules {
		if Key(r.Unit) == key && ArticleKey(r.Article) == article {
			return r, true
		}
	}
	return Rule{}, false
}

// ArticleKey is an article number as unit tables compare it: upper case,
// runs of white space as one space, as printed article numbers vary in both.
func ArticleKey(a string) string { return strings.ToUpper(strings.Join(strings.Fields(a), " ")) }

// convert writes the line in the supplier's unit: the code, the quantity
// times the factor, and the price per supplier unit — the printed price
// divided by the factor when that is an exact decimal of at most
// maxPriceScale places (or the printed price's own), else the printed price
// for factor times its price basis (PRICE_QUANTITY), so that no value is
// rounded. The line amount is never touched.
func convert(it *order.Item, code, factor, table string) error {
	printed := order.PrintedUnit{Quantity: it.Quantity, Unit: it.Unit, UnitPrice: it.UnitPrice,
		PriceBasisQuantity: it.PriceBasisQuantity, Factor: factor, Table: table}
	if order.Rat(factor).Cmp(big.NewRat(1, 1)) == 0 {
		if strings.TrimSpace(it.Unit) == code {
			return nil // printed as the code: nothing to say
		}
		it.Unit, it.AsPrinted = code, &printed
		return nil
	}
	before := lineValue(it)
	if err := scale(it, factor); err != nil {
		return err
	}
	if after := lineValue(it); before != nil && (after == nil || before.Cmp(after) != 0) {
		return fmt.Errorf("converting %s %s by %s would change quantity × price ÷ price basis from %s to %v",
			printed.Quantity, printed.Unit, factor, before.FloatString(6), after)
	}
	it.Unit, it.AsPrinted = code, &printed
	it.Remarks = append(it.Remarks, remark(&printed, code))
	return nil
}

// scale multiplies the quantity by factor and divides the price by it, or
// multiplies the price basis where the divided price would not be exact.
func scale(it *order.Item, factor string) error {
	for _, v := range []string{it.Quantity, it.UnitPrice, it.PriceBasisQuantity} {
		if v != "" && order.Rat(v) == nil {
			return fmt.Errorf("%q is not a decimal", v)
		}
	}
	if it.Quantity != "" {
		it.Quantity = product(it.Quantity, factor, scaleOf(it.Quantity))
	}
	p := order.Rat(it.UnitPrice)
	if p == nil {
		return nil
	}
	per := p.Quo(p, order.Rat(factor))
	if places, ok := exactPlaces(per, max(scaleOf(it.UnitPrice), maxPriceScale)); ok {
		it.UnitPrice = per.FloatString(max(scaleOf(it.UnitPrice), places))
		return nil
	}
	b := it.PriceBasisQuantity
	if r := order.Rat(b); r == nil || r.Sign() == 0 { // none (or 0) is 1, as the writer reads it
		b = "1"
	}
	it.PriceBasisQuantity = product(b, factor, scaleOf(it.PriceBasisQuantity))
	return nil
}

// maxPriceScale is the most decimal places a price divided by a factor may
// take before the price stays as printed with a larger price basis instead
// (ERPs commonly keep 4 places of a unit price).
const maxPriceScale = 4

// remark says on the line itself (openTRANS REMARKS, result JSON) what was
// printed and by which rule it was converted: the order is never changed
// silently.
func remark(p *order.PrintedUnit, code string) string {
	s := fmt.Sprintf("Ordered as printed: %s %s", p.Quantity, p.Unit)
	if p.UnitPrice != "" {
		s += " at " + p.UnitPrice
		if p.PriceBasisQuantity != "" {
			s += " per " + p.PriceBasisQuantity
		}
	}
	return s + fmt.Sprintf("; converted by the client's unit table: 1 %s = %s %s", p.Unit, p.Factor, code)
}

// lineValue is quantity × unit price ÷ price basis (nil without a quantity
// or a price).
func lineValue(it *order.Item) *big.Rat {
	q, p := order.Rat(it.Quantity), order.Rat(it.UnitPrice)
	if q == nil || p == nil {
		return nil
	}
	v := new(big.Rat).Mul(q, p)
	return v.Quo(v, basis(it.PriceBasisQuantity))
}

// basis is the price basis quantity; none (or 0) is 1, as the writer and
// the checks read it.
func basis(s string) *big.Rat {
	if b := order.Rat(s); b != nil && b.Sign() != 0 {
		return b
	}
	return big.NewRat(1, 1)
}

// scaleOf is the number of decimal places of a decimal as written.
func scaleOf(s string) int {
	if _, frac, ok := strings.Cut(s, "."); ok {
		return len(frac)
	}
	return 0
}

// exactPlaces is the fewest decimal places that hold r exactly, false
// when it needs more than limit (or its expansion does not end).
func exactPlaces(r *big.Rat, limit int) (int, bool) {
	for places := 0; places <= limit; places++ {
		if back, ok := new(big.Rat).SetString(r.FloatString(places)); ok && back.Cmp(r) == 0 {
			return places, true
		}
	}
	return 0, false
}

// product is a × b exactly (the places of a and b together always hold
// it), without trailing zeros beyond minScale places: 2 × 12 is "24",
// 2.50 × 12 is "30.00" as the quantity was printed with two places.
func product(a, b string, minScale int) string {
	s := new(big.Rat).Mul(order.Rat(a), order.Rat(b)).FloatString(scaleOf(a) + scaleOf(b))
	if !strings.Contains(s, ".") {
		return s
	}
	for scaleOf(s) > minScale && strings.HasSuffix(s, "0") {
		s = s[:len(s)-1]
	}
	return strings.TrimSuffix(s, ".")
}
