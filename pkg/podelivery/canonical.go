package podelivery

import (
	"encoding/json"
	"strings"

	"github.com/docintake/docintake/pkg/order"
)

// Canonical is the order as compared for duplicates: the business content
// (parties and addresses, dates, currency, lines with quantities and
// prices, totals, payment terms) with whitespace and decimal notation
// normalised, and without what differs between two prints of one PO
// (remarks, the detected language).
func Canonical(o *order.Order) ([]byte, error) {
	c := *o
	c.Remarks, c.Language = nil, ""
	c.ID, c.Currency, c.BuyerOrderID, c.PaymentTerms = normText(c.ID), normText(c.Currency), normText(c.BuyerOrderID), normText(c.PaymentTerms)
	c.Parties = make([]order.Party, len(o.Parties))
	for i, p := range o.Parties {
		c.Parties[i] = canonicalParty(p)
	}
	c.Items = make([]order.Item, len(o.Items))
	for i, it := range o.Items {
		c.Items[i] = canonicalItem(it)
	}
	t := &c.Totals
	for _, f := range []*string{&t.NetAmount, &t.TaxAmount, &t.GrossAmount, &t.LinesAmount, &t.Charges, &t.Allowances,
		&t.ExtraCharges, &t.Quantity} {
		*f = normDecimal(*f)
	}
	return json.Marshal(&c)
}

func canonicalParty(p order.Party) order.Party {
	p.ID, p.IDType, p.VATID = normText(p.ID), normText(p.IDType), normText(p.VATID)
	a := &p.Address
	for _, f := range []*string{&a.Name, &a.Name2, &a.Contact, &a.Street, &a.Zip, &a.City, &a.State, &a.Country,
		&a.CountryCoded, &a.Phone, &a.Email} {
		*f = normText(*f)
	}
	lines := make([]string, 0, len(a.Lines))
	for _, l := range a.Lines {
		if l = normText(l); l != "" {
			lines = append(lines, l)
		}
	}
	a.Lines = lines
	p.OtherIDs = append([]order.PartyID(nil), p.OtherIDs...)
	return p
}

func canonicalItem(it order.Item) order.Item {
	it.Remarks = nil
	for _, f := range []*string{&it.Position, &it.SupplierArticleID, &it.BuyerArticleID, &it.EAN, &it.Description,
		&it.LongDescription, &it.Unit} {
		*f = normText(*f)
	}
	for _, f := range []*string{&it.Quantity, &it.UnitPrice, &it.PriceBasisQuantity, &it.LineAmount, &it.TaxRate,
		&it.DiscountPercent, &it.DiscountAmount} {
		*f = normDecimal(*f)
	}
	if it.PriceBasisQuantity == "" {
		it.PriceBasisQuantity = "1" // "" means 1
	}
	return it
}

// normText collapses runs of white space.
func normText(s string) string { return strings.Join(strings.Fields(s), " ") }

// normDecimal writes a canonical decimal without trailing fractional
// zeros, so that "10.00" and "10" are the same quantity.
func normDecimal(s string) string {
	s = normText(s)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}
