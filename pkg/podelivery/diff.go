package podelivery

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/order"
)

// Diff says what a revision changed, for the order desk and the ERP:
// header values, then line by line ("line 2 quantity 10 → 12"), on
// canonical orders (Canonical). Lines are matched by their printed
// position when every line of both orders has a distinct one, else by
// their place in the order.
func Diff(prev, cur *order.Order) []string {
	var out []string
	field := func(what, a, b string) {
		if a != b {
			out = append(out, fmt.Sprintf("%s %s → %s", what, orNone(a), orNone(b)))
		}
	}
	field("order date", prev.IssueDate.String(), cur.IssueDate.String())
	field("delivery date", prev.DeliveryDate.String(), cur.DeliveryDate.String())
	field("currency", prev.Currency, cur.Currency)
	field("payment terms", prev.PaymentTerms, cur.PaymentTerms)
	for _, r := range []order.Role{order.RoleBuyer, order.RoleDelivery, order.RoleInvoice, order.RoleSupplier} {
		a, _ := prev.Party(r)
		b, _ := cur.Party(r)
		field(string(r)+" id", a.ID, b.ID)
		field(string(r)+" address", addressLine(a.Address), addressLine(b.Address))
	}
	out = append(out, diffLines(prev.Items, cur.Items)...)
	field("net total", prev.Totals.NetAmount, cur.Totals.NetAmount)
	field("gross total", prev.Totals.GrossAmount, cur.Totals.GrossAmount)
	return out
}

// diffLines compares the order lines.
func diffLines(prev, cur []order.Item) []string {
	byPos := positioned(prev) && positioned(cur)
	label := func(i int, it order.Item) string {
		if byPos {
			return "line " + it.Position
		}
		return "line " + strconv.Itoa(i+1)
	}
	curAt := map[string]int{}
	for i, it := range cur {
		curAt[label(i, it)] = i
	}
	var out []string
	seen := map[string]bool{}
	for i, a := range prev {
		k := label(i, a)
		j, ok := curAt[k]
		if !ok {
			out = append(out, fmt.Sprintf("%s removed (%s)", k, lineSummary(a)))
			continue
		}
		seen[k] = true
		out = append(out, diffLine(k, a, cur[j])...)
	}
	for i, b := range cur {
		if k := label(i, b); !seen[k] {
			out = append(out, fmt.Sprintf("%s added (%s)", k, lineSummary(b)))
		}
	}
	return out
}

// diffLine compares one line's values.
func diffLine(label string, a, b order.Item) []string {
	var out []string
	for _, f := range []struct{ what, a, b string }{
		{"supplier article", a.SupplierArticleID, b.SupplierArticleID},
		{"buyer article", a.BuyerArticleID, b.BuyerArticleID},
		{"EAN", a.EAN, b.EAN},
		{"description", a.Description, b.Description},
		{"quantity", a.Quantity, b.Quantity},
		{"unit", a.Unit, b.Unit},
		{"unit price", a.UnitPrice, b.UnitPrice},
		{"price basis", a.PriceBasisQuantity, b.PriceBasisQuantity},
		{"discount %", a.DiscountPercent, b.DiscountPercent},
		{"discount amount", a.DiscountAmount, b.DiscountAmount},
		{"line amount", a.LineAmount, b.LineAmount},
		{"tax rate", a.TaxRate, b.TaxRate},
		{"delivery date", a.DeliveryDate.String(), b.DeliveryDate.String()},
	} {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s %s %s → %s", label, f.what, orNone(f.a), orNone(f.b)))
		}
	}
	return out
}

// positioned reports whether every line has a printed position, each
// different.
func positioned(items []order.Item) bool {
	seen := map[string]bool{}
	for _, it := range items {
		if it.Position == "" || seen[it.Position] {
			return false
		}
		seen[it.Position] = true
	}
	return true
}

// lineSummary names a line by its article and quantity.
func lineSummary(it order.Item) string {
	article := it.SupplierArticleID
	if article == "" {
		article = it.BuyerArticleID
	}
	if article == "" {
		article = it.Description
	}
	return strings.TrimSpace(fmt.Sprintf("%s quantity %s %s", article, orNone(it.Quantity), it.Unit))
}

// addressLine is an address on one line.
func addressLine(a order.Address) string {
	parts := []string{a.Name, a.Name2, a.Street, strings.TrimSpace(a.Zip + " " + a.City), a.State, a.Country, a.CountryCoded}
	parts = append(parts, a.Lines...)
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
