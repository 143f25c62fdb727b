package orderflags

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pricelist"
)

// priceFlag compares line n's net price per unit (the printed price over
// its price basis, less the line's discounts) with entry e's price per unit
// and returns the flag (f filled in) when they differ by more than e's
// tolerance percentage. Expected and Printed are given in the line's price
// basis, so they read side by side.
func priceFlag(f Flag, n int, it order.Item, currency string, e pricelist.Entry) (Flag, bool) {
	basis := rat(it.PriceBasisQuantity, "1")
	printed := order.Rat(it.UnitPrice)
	if printed == nil || basis.Sign() <= 0 {
		return f, false
	}
	net, discount := netPerUnit(it, printed, basis)
	expected := new(big.Rat).Quo(rat(e.UnitPrice, "0"), rat(e.PriceBasis, "1"))
	diff := new(big.Rat).Sub(net, expected)
	dev := "" // the deviation in percent of the list's price
	if expected.Sign() == 0 {
		if net.Sign() == 0 {
			return f, false
		}
	} else {
		pct := new(big.Rat).Quo(new(big.Rat).Mul(diff, big.NewRat(100, 1)), expected)
		if new(big.Rat).Abs(pct).Cmp(rat(e.TolerancePct, "0")) <= 0 {
			return f, false
		}
		dev = new(big.Rat).Abs(pct).FloatString(2) + " % "
	}
	scale := max(2, decimals(it.UnitPrice), decimals(e.UnitPrice))
	inBasis := func(r *big.Rat) string { return new(big.Rat).Mul(r, basis).FloatString(scale) }
	f.Kind, f.Expected = KindPrice, inBasis(expected)
	what := "price " + it.UnitPrice
	if discount != "" {
		f.Printed = inBasis(net)
		what = fmt.Sprintf("net price %s (printed %s less %s)", f.Printed, it.UnitPrice, discount)
	}
	if ap := it.AsPrinted; ap != nil && ap.UnitPrice != "" && ap.Factor != "1" {
		// Compared in the supplier's unit; say what the PO printed.
		what += fmt.Sprintf(" (printed %s per %s of %s)", ap.UnitPrice, ap.Unit, ap.Factor)
	}
	dir := "above"
	if diff.Sign() < 0 {
		dir = "below"
	}
	f.Message = fmt.Sprintf("%s: %s %s per %s is %s%s the price list's %s (tolerance %s %%; %s)",
		lineName(n, it, f.Article), what, currency, per(it), dev, dir, f.Expected, e.TolerancePct, listName(e))
	return f, true
}

// netPerUnit is the line's price per unit after its discounts, and the
// discounts in words ("" when none).
func netPerUnit(it order.Item, printed, basis *big.Rat) (*big.Rat, string) {
	net := new(big.Rat).Quo(printed, basis)
	var words []string
	if pct := order.Rat(it.DiscountPercent); pct != nil && pct.Sign() != 0 {
		off := new(big.Rat).Quo(pct, big.NewRat(100, 1))
		net.Mul(net, new(big.Rat).Sub(big.NewRat(1, 1), off))
		words = append(words, it.DiscountPercent+" % discount")
	}
	amt, qty := order.Rat(it.DiscountAmount), order.Rat(it.Quantity)
	if amt != nil && amt.Sign() != 0 && qty != nil && qty.Sign() > 0 {
		net.Sub(net, new(big.Rat).Quo(amt, qty))
		words = append(words, it.DiscountAmount+" off the line")
	}
	return net, strings.Join(words, " and ")
}

// per is the line's price basis and unit: "C62", "100 C62".
func per(it order.Item) string {
	unit := pricelist.UnitKey(it.Unit)
	if b := strings.TrimSpace(it.PriceBasisQuantity); b != "" && rat(b, "1").Cmp(big.NewRat(1, 1)) != 0 {
		return b + " " + unit
	}
	return unit
}

// decimals is the number of fraction digits of a decimal.
func decimals(s string) int {
	if _, frac, ok := strings.Cut(s, "."); ok {
		return len(frac)
	}
	return 0
}
