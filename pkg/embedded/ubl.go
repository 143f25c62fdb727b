package embedded

import (
	"fmt"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/order"
)

// ublDate reads an xsd:date (YYYY-MM-DD, an optional zone suffix ignored).
func (v *values) ublDate(s, what string) order.Date {
	s = strings.TrimSpace(s)
	if s == "" {
		return order.Date{}
	}
	t, err := time.Parse(time.DateOnly, s[:min(len(s), 10)])
	if err != nil {
		v.fail("%s %q is not a date", what, s)
		return order.Date{}
	}
	return order.DateOf(t)
}

// readUBLOrder maps a UBL 2.1 Order (Peppol BIS Ordering 3).
func readUBLOrder(d *Document, root *elem) error {
	d.Standard, d.Kind = StandardUBL, KindOrder
	d.Profile = ublProfile(root.str("CustomizationID"))
	d.ID, d.TypeCode = root.str("ID"), root.str("OrderTypeCode")
	var v values
	o := &order.Order{Type: order.TypeOrder, ID: d.ID, Currency: root.str("DocumentCurrencyCode")}
	o.IssueDate = v.ublDate(root.str("IssueDate"), "IssueDate")
	for _, n := range root.all("Note") {
		if n.text != "" {
			o.Remarks = append(o.Remarks, n.text)
		}
	}
	if r := root.str("CustomerReference"); r != "" {
		o.Remarks = append(o.Remarks, "Buyer reference: "+r)
	}
	for _, p := range []struct {
		e    *elem
		role order.Role
	}{
		{root.at("BuyerCustomerParty", "Party"), order.RoleBuyer},
		{root.at("SellerSupplierParty", "Party"), order.RoleSupplier},
		{root.at("Delivery", "DeliveryParty"), order.RoleDelivery},
		{root.kid("AccountingCustomerParty").kid("Party"), order.RoleInvoice},
	} {
		if p.e == nil {
			continue
		}
		party := ublParty(p.e, p.role)
		if p.role == order.RoleDelivery {
			ublAddress(&party.Address, root.at("Delivery", "DeliveryLocation", "Address"))
		}
		o.Parties = append(o.Parties, party)
	}
	dp := root.at("Delivery", "RequestedDeliveryPeriod")
	o.DeliveryDate = v.ublDate(dp.str("StartDate"), "RequestedDeliveryPeriod")
	if o.DeliveryDate.IsZero() {
		o.DeliveryDate = v.ublDate(dp.str("EndDate"), "RequestedDeliveryPeriod")
	}
	o.PaymentTerms = root.str("PaymentTerms", "Note")
	tot := root.kid("AnticipatedMonetaryTotal")
	net := tot.str("TaxExclusiveAmount")
	if net == "" {
		net = tot.str("LineExtensionAmount")
	}
	o.Totals = order.Totals{
		NetAmount:   v.decimal(net, "TaxExclusiveAmount"),
		TaxAmount:   v.decimal(root.str("TaxTotal", "TaxAmount"), "TaxAmount"),
		GrossAmount: v.decimal(tot.str("PayableAmount"), "PayableAmount"),
		// What lies between the lines and the net total, for the checks.
		LinesAmount: v.decimal(tot.str("LineExtensionAmount"), "LineExtensionAmount"),
		Charges:     v.decimal(tot.str("ChargeTotalAmount"), "ChargeTotalAmount"),
		Allowances:  v.decimal(tot.str("AllowanceTotalAmount"), "AllowanceTotalAmount"),
	}
	for i, ol := range root.all("OrderLine") {
		o.Items = append(o.Items, ublItem(&v, ol, i))
	}
	if v.err != nil {
		return v.err
	}
	d.Order = o
	return nil
}

// ublItem reads the i-th OrderLine; a value that does not convert is
// recorded in v.
func ublItem(v *values, ol *elem, i int) order.Item {
	li := ol.kid("LineItem")
	it := order.Item{Position: li.str("ID")}
	what := func(f string) string { return fmt.Sprintf("line %d (%s) %s", i+1, it.Position, f) }
	item := li.kid("Item")
	it.SupplierArticleID = item.str("SellersItemIdentification", "ID")
	it.BuyerArticleID = item.str("BuyersItemIdentification", "ID")
	if g := item.at("StandardItemIdentification", "ID"); g != nil && g.text != "" {
		if s := g.attr("schemeID"); s == "" || s == schemeGTIN {
			it.EAN = g.text
		} else {
			it.Remarks = append(it.Remarks, fmt.Sprintf("Standard id (scheme %s): %s", s, g.text))
		}
	}
	it.Description, it.LongDescription = item.str("Name"), item.str("Description")
	if q := li.kid("Quantity"); q != nil {
		it.Quantity, it.Unit = v.decimal(q.text, what("quantity")), q.attr("unitCode")
	}
	it.UnitPrice = v.decimal(li.str("Price", "PriceAmount"), what("price"))
	it.PriceBasisQuantity = v.decimal(li.str("Price", "BaseQuantity"), what("price base quantity"))
	it.LineAmount = v.decimal(li.str("LineExtensionAmount"), what("line amount"))
	it.TaxRate = v.decimal(item.str("ClassifiedTaxCategory", "Percent"), what("tax rate"))
	ldp := li.at("Delivery", "RequestedDeliveryPeriod")
	it.DeliveryDate = v.ublDate(ldp.str("StartDate"), what("delivery date"))
	if it.DeliveryDate.IsZero() {
		it.DeliveryDate = v.ublDate(ldp.str("EndDate"), what("delivery date"))
	}
	for _, n := range ol.all("Note") {
		if n.text != "" {
			it.Remarks = append(it.Remarks, n.text)
		}
	}
	if n := li.str("Note"); n != "" {
		it.Remarks = append(it.Remarks, n)
	}
	return it
}

// ublParty maps a cac:Party: PartyIdentification and EndpointID (GLN scheme
// 0088 typed gln; a second id becomes OtherIDs), name, postal address, VAT
// id, contact.
func ublParty(e *elem, role order.Role) order.Party {
	p := order.Party{Role: role}
	ids := append([]*elem{}, e.at("PartyIdentification", "ID"))
	ids = append(ids, e.kid("EndpointID"))
	for _, id := range ids {
		if id == nil || id.text == "" {
			continue
		}
		typ := "party_specific"
		if id.attr("schemeID") == schemeGLN {
			typ = "gln"
		}
		if p.ID == "" {
			p.ID, p.IDType = id.text, typ
		} else if id.text != p.ID {
			p.OtherIDs = append(p.OtherIDs, order.PartyID{ID: id.text, Type: typ})
		}
	}
	a := &p.Address
	a.Name = e.str("PartyName", "Name")
	if a.Name == "" {
		a.Name = e.str("PartyLegalEntity", "RegistrationName")
	}
	for _, ts := range e.all("PartyTaxScheme") {
		if id := ts.str("CompanyID"); id != "" && p.VATID == "" {
			p.VATID = id
		}
	}
	ublAddress(a, e.kid("PostalAddress"))
	c := e.kid("Contact")
	a.Contact, a.Phone, a.Email = c.str("Name"), c.str("Telephone"), c.str("ElectronicMail")
	return p
}

func ublAddress(a *order.Address, pa *elem) {
	if pa == nil {
		return
	}
	a.Street = joinNonEmpty(", ", pa.str("StreetName"), pa.str("AdditionalStreetName"), pa.str("AddressLine", "Line"))
	a.Zip, a.City, a.State = pa.str("PostalZone"), pa.str("CityName"), pa.str("CountrySubentity")
	a.CountryCoded = pa.str("Country", "IdentificationCode")
}
