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
	// quantity, per line.
	LineAmount bool
	// NetTotal: the sum of the line amounts = the net total.
	NetTotal bool
	// GrossTotal: net total + tax total = gross total.
	GrossTotal bool
}

// defaultChecks are on for every template unless switched off.
var defaultChecks = Checks{LineAmount: true, NetTotal: true, GrossTotal: true}

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
	Check  string // line_amount, net_total or gross_total
	Detail string // the numbers, in words
}

// CheckOrder runs the template's arithmetic checks on a canonical order
// (whether it came from text or from an attached structured document) and
// returns the failures, and for the debug view a line per check made. An
// order with NoItems skips the line checks.
func (t *Template) CheckOrder(o *order.Order) (fails []CheckFailure, made []string) {
	c := t.DocIntake.Checks
	tol := c.tolerance(o.Currency)
	rat := func(s string) *big.Rat {
		if s == "" {
			return nil
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return nil
		}
		return r
	}
	within := func(a, b *big.Rat) (string, bool) {
		d := new(big.Rat).Sub(a, b)
		d.Abs(d)
		return dec(d), d.Cmp(tol) <= 0
	}
	tolText := dec(tol)
	var lineSum *big.Rat
	allAmounts := !o.NoItems && len(o.Items) > 0
	if allAmounts {
		lineSum = new(big.Rat)
	}
	for i, it := range o.Items {
		if o.NoItems {
			break
		}
		amt := rat(it.LineAmount)
		if amt == nil {
			allAmounts = false
		} else if lineSum != nil {
			lineSum.Add(lineSum, amt)
		}
		q, p := rat(it.Quantity), rat(it.UnitPrice)
		if !c.LineAmount || amt == nil || q == nil || p == nil {
			continue
		}
		basis := rat(it.PriceBasisQuantity)
		if basis == nil || basis.Sign() == 0 {
			basis = big.NewRat(1, 1)
		}
		want := new(big.Rat).Mul(q, p)
		want.Quo(want, basis)
		per := ""
		if it.PriceBasisQuantity != "" {
			per = " ÷ price basis " + it.PriceBasisQuantity
		}
		diff, ok := within(want, amt)
		line := fmt.Sprintf("line %d (position %s%s): quantity %s × unit price %s%s = %s, printed line amount %s",
			i+1, it.Position, describe(it), it.Quantity, it.UnitPrice, per, dec(want), it.LineAmount)
		if !ok {
			fails = append(fails, CheckFailure{"line_amount", fmt.Sprintf("%s (difference %s, tolerance %s)", line, diff, tolText)})
		}
		made = append(made, fmt.Sprintf("check line_amount %s: %s", okText(ok), line))
	}
	tt := o.Totals
	zero := new(big.Rat)
	orZero := func(s string) *big.Rat {
		if r := rat(s); r != nil {
			return r
		}
		return zero
	}
	add := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
	compare := func(check string, got *big.Rat, how string, printedName, printed string) {
		diff, ok := within(got, rat(printed))
		line := fmt.Sprintf("%s = %s, printed %s %s", how, dec(got), printedName, printed)
		if !ok {
			fails = append(fails, CheckFailure{check, fmt.Sprintf("%s (difference %s, tolerance %s)", line, diff, tolText)})
		}
		made = append(made, fmt.Sprintf("check %s %s: %s", check, okText(ok), line))
	}
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
	if c.NetTotal && allAmounts {
		sumText := fmt.Sprintf("sum of %d line amounts", len(o.Items))
		switch {
		case tt.LinesAmount != "":
			compare("net_total", lineSum, sumText, "lines total", tt.LinesAmount)
		case tt.NetAmount != "":
			compare("net_total", adjusted(lineSum), sumText+adjust, "net total", tt.NetAmount)
		}
	}
	if c.NetTotal && tt.LinesAmount != "" && tt.NetAmount != "" {
		compare("net_total", adjusted(rat(tt.LinesAmount)), "lines total "+tt.LinesAmount+adjust, "net total", tt.NetAmount)
	}
	if c.GrossTotal && tt.NetAmount != "" && tt.TaxAmount != "" && tt.GrossAmount != "" {
		how := "net total " + tt.NetAmount + " + tax total " + tt.TaxAmount
		sum := add(rat(tt.NetAmount), rat(tt.TaxAmount))
		if tt.ExtraCharges != "" {
			how += " + extra charges " + tt.ExtraCharges
			sum = add(sum, rat(tt.ExtraCharges))
		}
		compare("gross_total", sum, how, "gross total", tt.GrossAmount)
	}
	return fails, made
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
