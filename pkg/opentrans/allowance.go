package opentrans

import (
	"encoding/xml"
	"math/big"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/order"
)

// A line's discount (order.Item DiscountPercent, then DiscountAmount off
// the line) is written as PRODUCT_PRICE_FIX/ALLOW_OR_CHARGES_FIX. openTRANS
// applies those allowances to the price, not to the line: the ORDER
// specification's ORDER_ITEM example has PRICE_AMOUNT 1200, a 10 % rebate
// (ALLOW_OR_CHARGES_TOTAL_AMOUNT 120) and PRICE_LINE_AMOUNT 4680 for 4
// units, 4 × (1200 − 120). So:
//
//   - the percentage is AOC_PERCENTAGE_FACTOR as a factor (75 → 0.75; the
//     spec multiplies the factor by the price), ALLOW_OR_CHARGE_SEQUENCE 1;
//   - the line's amount becomes an amount per price unit, AOC_MONETARY_AMOUNT
//     = amount × PRICE_QUANTITY ÷ QUANTITY, applied after the percentage,
//     when that is an exact decimal (10 off 3 units is not, and a rounded
//     value would be invented); the line's amount itself has no element and
//     is kept in a note, which is also how Read gets the printed value back;
//   - without a unit price there is no PRODUCT_PRICE_FIX: the percentage
//     goes to a note too.
//
// ALLOW_OR_CHARGE type is "allowance" with ALLOW_OR_CHARGE_TYPE "rebate"
// (the spec's value for a price discount); a negative discount is a
// surcharge (type "surcharge", ALLOW_OR_CHARGE_TYPE "charge"), as openTRANS
// writes both as positive values. A discount of zero is no discount and is
// not written. PRICE_AMOUNT stays the printed (list) price and
// PRICE_LINE_AMOUNT the printed, discounted line amount.

// allowances returns the ALLOW_OR_CHARGES_FIX of an item (nil when it has
// no discount or no price) and adds the discount notes to ns. qty, price
// and basis are the item's values as written.
func (b *builder) allowances(it *order.Item, qty, price, basis string, ns notes, what func(string) string) (*node, error) {
	pct, err := b.decimal(it.DiscountPercent, what("discount percent"))
	if err != nil {
		return nil, err
	}
	amount, err := b.decimal(it.DiscountAmount, what("discount amount"))
	if err != nil {
		return nil, err
	}
	if isZero(pct) {
		pct = ""
	}
	if isZero(amount) {
		amount = ""
	}
	if amount != "" {
		ns.add(noteDiscountAmount, amount)
	}
	if price == "" {
		if pct != "" {
			ns.add(noteDiscountPercent, pct)
		}
		return nil, nil
	}
	list := &node{name: "ALLOW_OR_CHARGES_FIX"}
	if pct != "" {
		factor := shiftDecimal(pct, -2)
		if !checkDecimal(factor) {
			return nil, invalid("%s %q is out of range", what("discount percent"), pct)
		}
		list.add(allowOrCharge(len(list.kids)+1, "AOC_PERCENTAGE_FACTOR", factor))
	}
	if per, ok := perPriceAmount(amount, qty, basis); ok {
		list.add(allowOrCharge(len(list.kids)+1, "AOC_MONETARY_AMOUNT", per))
	}
	if len(list.kids) == 0 {
		return nil, nil
	}
	return list, nil
}

// allowOrCharge is one ALLOW_OR_CHARGE with the value v in element elem; a
// negative v is a surcharge of -v.
func allowOrCharge(seq int, elem, v string) *node {
	typ, kind := "allowance", "rebate"
	if strings.HasPrefix(v, "-") {
		typ, kind, v = "surcharge", "charge", v[1:]
	}
	n := el("ALLOW_OR_CHARGE",
		leaf("ALLOW_OR_CHARGE_SEQUENCE", strconv.Itoa(seq)),
		leaf("ALLOW_OR_CHARGE_TYPE", kind),
		el("ALLOW_OR_CHARGE_VALUE", leaf(elem, v)))
	n.attrs = []xml.Attr{attr("type", typ)}
	return n
}

// xAllow is an ALLOW_OR_CHARGE as Read sees it.
type xAllow struct {
	Type    string   `xml:"type,attr"`
	Percent []string `xml:"ALLOW_OR_CHARGE_VALUE>AOC_PERCENTAGE_FACTOR"`
	Amount  []string `xml:"ALLOW_OR_CHARGE_VALUE>AOC_MONETARY_AMOUNT"`
	Base    []string `xml:"ALLOW_OR_CHARGE_BASE"`
}

// readAllowances returns the discount percentage of the first percentage
// allowance (or surcharge, negative) and the amount per price unit of the
// first monetary one. Entries with their own ALLOW_OR_CHARGE_BASE, of
// another type, with a zero value or a value that is not a plain decimal
// (dtFLOAT allows "1E-2") are not read: the model has no place for them.
func readAllowances(list []xAllow) (pct, perPrice string) {
	for _, a := range list {
		sign := ""
		switch strings.TrimSpace(a.Type) {
		case "allowance":
		case "surcharge":
			sign = "-"
		default:
			continue
		}
		if len(a.Base) > 0 {
			continue
		}
		if f, ok := allowValue(a.Percent, sign); ok && pct == "" {
			pct = shiftDecimal(f, 2)
		}
		if m, ok := allowValue(a.Amount, sign); ok && perPrice == "" {
			perPrice = m
		}
	}
	return pct, perPrice
}

// allowValue is the first of vs as a canonical non-zero decimal, negated
// for sign "-".
func allowValue(vs []string, sign string) (string, bool) {
	if len(vs) == 0 {
		return "", false
	}
	v, ok := order.CanonicalDecimal(clean(vs[0]))
	if !ok || isZero(v) {
		return "", false
	}
	if sign == "-" {
		if strings.HasPrefix(v, "-") {
			return v[1:], true
		}
		return "-" + v, true
	}
	return v, true
}

// perPriceAmount is a line's discount amount per price unit: amount ×
// price basis ÷ quantity, when that is an exact decimal the schema takes.
func perPriceAmount(amount, qty, basis string) (string, bool) {
	a, q := order.Rat(amount), order.Rat(qty)
	if a == nil || q == nil || q.Sign() == 0 {
		return "", false
	}
	m := new(big.Rat).Mul(a, basisOf(basis))
	return exactDecimal(m.Quo(m, q))
}

// lineDiscount is the inverse of perPriceAmount: the line's amount for an
// amount per price unit.
func lineDiscount(perPrice, qty, basis string) (string, bool) {
	m, q := order.Rat(perPrice), order.Rat(qty)
	if m == nil || q == nil {
		return "", false
	}
	a := new(big.Rat).Mul(m, q)
	return exactDecimal(a.Quo(a, basisOf(basis)))
}

// basisOf is the price basis quantity; none (or 0) is 1.
func basisOf(basis string) *big.Rat {
	if b := order.Rat(basis); b != nil && b.Sign() != 0 {
		return b
	}
	return big.NewRat(1, 1)
}

// exactDecimal renders r with as few decimals as it needs, false when its
// decimal expansion does not end (a denominator with a factor other than 2
// and 5) or is longer than the schema takes.
func exactDecimal(r *big.Rat) (string, bool) {
	d := new(big.Int).Set(r.Denom())
	scale := 0
	for _, f := range []int64{2, 5} {
		n, m := 0, new(big.Int)
		for bf := big.NewInt(f); ; n++ {
			q, rem := new(big.Int).QuoRem(d, bf, m)
			if rem.Sign() != 0 {
				break
			}
			d = q
		}
		scale = max(scale, n)
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return "", false
	}
	s := r.FloatString(scale)
	return s, checkDecimal(s)
}

// sameDecimal reports whether two decimals are equal in value (both ""
// counts as equal).
func sameDecimal(a, b string) bool {
	ra, rb := order.Rat(a), order.Rat(b)
	if ra == nil || rb == nil {
		return a == b
	}
	return ra.Cmp(rb) == 0
}

func isZero(v string) bool { return v != "" && strings.Trim(v, "-0.") == "" }
