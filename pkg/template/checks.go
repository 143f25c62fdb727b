package template

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/docintake/docintake/pkg/order"
)

// Checks are the arithmetic checks of the docintake block (checks:). Each
// runs only where its values are present, and all are on by default.
type Checks struct {
	// Tolerance is the largest difference accepted, as a decimal; "" means
	// half of the currency's minor unit (0.005 for EUR, 0.5 for JPY).
	Tolerance string
	// LineAmount: line amount = quantity × unit price ÷ price basis
	// quantity × (1 − discount percent/100) − discount amount, per line.
	LineAmount bool
	// NetTotal: the sum of the line amounts = the net total.
	NetTotal bool
	// GrossTotal: net total + tax total = gross total.
	GrossTotal bool
	// QuantityTotal: the sum of the item quantities = the printed total
	// quantity (total_quantity), exactly.
	QuantityTotal bool
}

// defaultChecks are on for every template unless switched off.
var defaultChecks = Checks{LineAmount: true, NetTotal: true, GrossTotal: true, QuantityTotal: true}

// minorUnits are the ISO 4217 currencies whose minor unit is not 1/100.
var minorUnits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0,
	"UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// tolerance returns the checks' tolerance for currency (an ISO code or a
// printed symbol; unknown currencies have two decimals).
func (c Checks) tolerance(currency string) *big.Rat {
	if c.Tolerance != "" {
		if r, ok := new(big.Rat).SetString(c.Tolerance); ok {
			return r
		}
	}
	digits, ok := minorUnits[strings.ToUpper(strings.TrimSpace(currency))]
	if !ok {
		digits = 2
	}
	// Half of 10^-digits.
	return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Mul(big.NewInt(2), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)))
}

// CheckFailure is one failed arithmetic check, for the rejection detail.
type CheckFailure struct {
	Check  string // line_amount, net_total, gross_total or quantity_total
	Detail string // the numbers, in words
}

// CheckOrder runs the template's arithmetic checks on a canonical order
// (whether it came from text or from an attached structured document) and
// returns the failures, and for the debug view a line per check made. An
// order with NoItems skips the line checks.
func (t *Template) CheckOrder(o *order.Order) (fails []CheckFailure, made []string) {
	c := t.DocIntake.Checks
	k := &checker{tol: c.tolerance(o.Currency)}
	var lineSum *big.Rat
	if !o.NoItems && len(o.Items) > 0 {
		lineSum = k.lines(o.Items, c.LineAmount)
		if c.QuantityTotal {
			k.quantityTotal(o.Items, o.Totals.Quantity)
		}
	}
	k.totals(c, o.Totals, lineSum, len(o.Items))
	return k.fails, k.made
}

// checker collects the failures and, for the debug view, every check made.
type checker struct {
	tol   *big.Rat
	fails []CheckFailure
	made  []string
}

// compare records whether got (computed as how says) is within tol of the
// printed value.
func (k *checker) compare(check string, got *big.Rat, how, printedName, printed string, tol *big.Rat) {
	d := new(big.Rat).Sub(got, order.Rat(printed))
	d.Abs(d)
	ok := d.Cmp(tol) <= 0
	line := fmt.Sprintf("%s = %s, printed %s %s", how, dec(got), printedName, printed)
	if !ok {
		k.fails = append(k.fails, CheckFailure{check, fmt.Sprintf("%s (difference %s, tolerance %s)", line, dec(d), dec(tol))})
	}
	k.made = append(k.made, fmt.Sprintf("check %s %s: %s", check, okText(ok), line))
}

// lines runs the line_amount check on every line when check is set and
// returns the sum of the line amounts, nil when a line has none.
func (k *checker) lines(items []order.Item, check bool) *big.Rat {
	sum := new(big.Rat)
	for i, it := range items {
		amt := order.Rat(it.LineAmount)
		if amt == nil {
			sum = nil
		} else if sum != nil {
			sum.Add(sum, amt)
		}
		if check && amt != nil {
			k.lineAmount(i, it)
		}
	}
	return sum
}

// lineAmount checks quantity × unit price ÷ price basis × (1 − discount
// percent/100) − discount amount = line amount: the printed line amount is
// the discounted one, the unit price the list price. Skipped without a
// quantity or a unit price.
func (k *checker) lineAmount(i int, it order.Item) {
	q, p := order.Rat(it.Quantity), order.Rat(it.UnitPrice)
	if q == nil || p == nil {
		return
	}
	want := new(big.Rat).Mul(q, p)
	how := fmt.Sprintf("line %d (position %s%s): quantity %s × unit price %s", i+1, it.Position, describe(it), it.Quantity, it.UnitPrice)
	if it.PriceBasisQuantity != "" {
		if b := order.Rat(it.PriceBasisQuantity); b != nil && b.Sign() != 0 {
			want.Quo(want, b)
		}
		how += " ÷ price basis " + it.PriceBasisQuantity
	}
	if d := order.Rat(it.DiscountPercent); d != nil {
		keep := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(d, big.NewRat(100, 1)))
		want.Mul(want, keep)
		how += " × (1 − discount " + it.DiscountPercent + " %)"
	}
	if d := order.Rat(it.DiscountAmount); d != nil {
		want.Sub(want, d)
		how += " − discount " + it.DiscountAmount
	}
	k.compare("line_amount", want, how, "line amount", it.LineAmount, k.tol)
}

// quantityTotal checks the sum of the item quantities against a printed
// total quantity, exactly (quantities are counted, not rounded): a detail
// page that repeats an article (a per-market breakdown) read as further
// items shows up here. Skipped without a printed total or when a line has
// no quantity (rejected on its own).
func (k *checker) quantityTotal(items []order.Item, printed string) {
	if order.Rat(printed) == nil {
		return
	}
	sum := new(big.Rat)
	for _, it := range items {
		q := order.Rat(it.Quantity)
		if q == nil {
			return
		}
		sum.Add(sum, q)
	}
	k.compare("quantity_total", sum, fmt.Sprintf("sum of %d item quantities", len(items)), "total quantity", printed, new(big.Rat))
}

// totals runs net_total and gross_total; lineSum is nil when not every
// line has an amount.
func (k *checker) totals(c Checks, tt order.Totals, lineSum *big.Rat, n int) {
	orZero := func(s string) *big.Rat {
		if r := order.Rat(s); r != nil {
			return r
		}
		return new(big.Rat)
	}
	add := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
	adjust := ""
	if tt.Charges != "" {
		adjust += " + charges " + tt.Charges
	}
	if tt.Allowances != "" {
		adjust += " − allowances " + tt.Allowances
	}
	adjusted := func(base *big.Rat) *big.Rat {
		return new(big.Rat).Sub(add(base, orZero(tt.Charges)), orZero(tt.Allowances))
	}
	if c.NetTotal && lineSum != nil {
		sumText := fmt.Sprintf("sum of %d line amounts", n)
		switch {
		case tt.LinesAmount != "":
			k.compare("net_total", lineSum, sumText, "lines total", tt.LinesAmount, k.tol)
		case tt.NetAmount != "":
			k.compare("net_total", adjusted(lineSum), sumText+adjust, "net total", tt.NetAmount, k.tol)
		}
	}
	if c.NetTotal && tt.LinesAmount != "" && tt.NetAmount != "" {
		k.compare("net_total", adjusted(order.Rat(tt.LinesAmount)), "lines total "+tt.LinesAmount+adjust, "net total", tt.NetAmount, k.tol)
	}
	if c.GrossTotal && tt.NetAmount != "" && tt.TaxAmount != "" && tt.GrossAmount != "" {
		how := "net total " + tt.NetAmount + " + tax total " + tt.TaxAmount
		sum := add(order.Rat(tt.NetAmount), order.Rat(tt.TaxAmount))
		if tt.ExtraCharges != "" {
			how += " + extra charges " + tt.ExtraCharges
			sum = add(sum, order.Rat(tt.ExtraCharges))
		}
		k.compare("gross_total", sum, how, "gross total", tt.GrossAmount, k.tol)
	}
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

// describe names an item for people: its article number or description.
func describe(it order.Item) string {
	for _, s := range []string{it.SupplierArticleID, it.BuyerArticleID, it.EAN, it.Description} {
		if s = strings.TrimSpace(strings.SplitN(s, "\n", 2)[0]); s != "" {
			if len(s) > 40 {
				s = s[:40] + "…"
			}
			return fmt.Sprintf(", %q", s)
		}
	}
	return ""
}

// dec renders an exact rational as a decimal without trailing zeros
// (up to 12 places, which exact products of printed decimals never exceed).
func dec(r *big.Rat) string {
	s := r.FloatString(12)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}
