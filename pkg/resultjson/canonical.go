package resultjson

import (
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
)

// Canonical turns a result JSON order (a person's correction, say) back
// into the canonical order. What the JSON shape does not carry (an item's
// discounts, the totals' lines amount, charges, allowances and printed
// quantity) is taken from base's item at the same position and base's
// totals, so a correction of the values shown keeps what was read besides
// them; base may be nil. A malformed date is EINVALID naming the field.
func (oj Order) Canonical(base *order.Order) (*order.Order, error) {
	if base == nil {
		base = &order.Order{}
	}
	o := &order.Order{Type: order.DocumentType(oj.DocumentType), ID: oj.OrderID, Currency: oj.Currency,
		Language: oj.Language, BuyerOrderID: oj.BuyerOrderID, PaymentTerms: oj.PaymentTerms, Remarks: oj.Remarks,
		NoItems: oj.NoItems, Totals: base.Totals}
	var err error
	if o.IssueDate, err = date("order_date", oj.OrderDate); err != nil {
		return nil, err
	}
	if o.DeliveryDate, err = date("delivery_date", oj.DeliveryDate); err != nil {
		return nil, err
	}
	o.Totals.NetAmount, o.Totals.TaxAmount, o.Totals.GrossAmount = oj.Totals.NetAmount, oj.Totals.TaxAmount, oj.Totals.GrossAmount
	for _, p := range oj.Parties {
		a := p.Address
		cp := order.Party{Role: order.Role(p.Role), ID: p.ID, IDType: p.IDType, VATID: p.VATID,
			Address: order.Address{Name: a.Name, Name2: a.Name2, Contact: a.Contact, Street: a.Street, Zip: a.Zip,
				City: a.City, State: a.State, Country: a.Country, CountryCoded: a.CountryCoded, Phone: a.Phone,
				Email: a.Email, Lines: a.Lines}}
		for _, id := range p.OtherIDs {
			cp.OtherIDs = append(cp.OtherIDs, order.PartyID{ID: id.ID, Type: id.Type})
		}
		o.Parties = append(o.Parties, cp)
	}
	for i, it := range oj.Items {
		ci := order.Item{Position: it.Position, SupplierArticleID: it.SupplierArticleID, BuyerArticleID: it.BuyerArticleID,
			EAN: it.EAN, Description: it.Description, LongDescription: it.LongDescription, Quantity: it.Quantity,
			Unit: it.Unit, UnitPrice: it.UnitPrice, PriceBasisQuantity: it.PriceBasisQuantity, LineAmount: it.LineAmount,
			TaxRate: it.TaxRate, Remarks: it.Remarks, AsPrinted: (*order.PrintedUnit)(it.AsPrinted)}
		if i < len(base.Items) {
			ci.DiscountPercent, ci.DiscountAmount = base.Items[i].DiscountPercent, base.Items[i].DiscountAmount
		}
		if ci.DeliveryDate, err = date(fmt.Sprintf("items[%d].delivery_date", i), it.DeliveryDate); err != nil {
			return nil, err
		}
		o.Items = append(o.Items, ci)
	}
	return o, nil
}

// date parses YYYY-MM-DD ("" is no date).
func date(field, s string) (order.Date, error) {
	if s == "" {
		return order.Date{}, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return order.Date{}, document.Errorf(document.EINVALID, "%s %q is not a date (YYYY-MM-DD)", field, s)
	}
	return order.DateOf(t), nil
}
