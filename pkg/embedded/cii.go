package embedded

import (
	"fmt"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/order"
)

// orderXKinds maps Order-X's ExchangedDocument/TypeCode (UNTDID 1001).
var orderXKinds = map[string]Kind{"220": KindOrder, "230": KindOrderChange, "231": KindOrderResponse}

// values collects the first mapping error, so a mapper reads every value in
// one pass and reports the first one that is malformed.
type values struct{ err error }

// decimal returns s in the canonical decimal form of pkg/order.
func (v *values) decimal(s, what string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	d, ok := order.CanonicalDecimal(s)
	if !ok {
		v.fail("%s %q is not a decimal", what, s)
		return ""
	}
	return d
}

// ciiDate reads a udt:DateTimeString (format 102 CCYYMMDD, 203
// CCYYMMDDHHMM, 204 with seconds; no format attribute means 102).
func (v *values) ciiDate(e *elem, what string) order.Date {
	if e == nil {
		return order.Date{}
	}
	s := strings.TrimSpace(e.text)
	if s == "" {
		return order.Date{}
	}
	layout := map[string]string{"": "20060102", "102": "20060102", "203": "200601021504", "204": "20060102150405"}[e.attr("format")]
	if layout == "" {
		v.fail("%s: unsupported date format %q", what, e.attr("format"))
		return order.Date{}
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		v.fail("%s %q is not a date in format %s", what, s, layout)
		return order.Date{}
	}
	return order.DateOf(t)
}

func (v *values) fail(format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf(format, args...)
	}
}

// readOrderX maps an Order-X message (urn:order-x.eu:1p0:basic, comfort or
// extended): order (220), order change (230) or order response (231).
func readOrderX(d *Document, root *elem) error {
	d.Standard = StandardOrderX
	d.Profile = guidelineProfile(root.str("ExchangedDocumentContext", "GuidelineSpecifiedDocumentContextParameter", "ID"))
	ex := root.kid("ExchangedDocument")
	d.TypeCode, d.ID = ex.str("TypeCode"), ex.str("ID")
	kind, ok := orderXKinds[d.TypeCode]
	if !ok {
		d.Kind = KindOrder
		return fmt.Errorf("unknown Order-X type code %q (220 order, 230 order change, 231 order response)", d.TypeCode)
	}
	d.Kind = kind
	var v values
	tx := root.kid("SupplyChainTradeTransaction")
	agr := tx.kid("ApplicableHeaderTradeAgreement")
	del := tx.kid("ApplicableHeaderTradeDelivery")
	set := tx.kid("ApplicableHeaderTradeSettlement")
	o := &order.Order{Type: kind.DocumentType(), ID: d.ID, Currency: set.str("OrderCurrencyCode")}
	o.IssueDate = v.ciiDate(ex.at("IssueDateTime", "DateTimeString"), "IssueDateTime")
	if o.Currency == "" {
		o.Currency = set.str("InvoiceCurrencyCode")
	}
	switch ref := agr.str("BuyerOrderReferencedDocument", "IssuerAssignedID"); {
	case kind == KindOrderResponse:
		// The response is the seller's document answering the buyer's
		// order: both numbers travel (ORDER_ID and SUPPLIER_ORDER_ID).
		o.BuyerOrderID = ref
	case kind == KindOrderChange && ref != "" && ref != d.ID:
		// openTRANS identifies a change by the order it changes.
		o.ID = ref
		o.Remarks = append(o.Remarks, "Order change document id: "+d.ID)
	}
	for _, n := range ex.all("IncludedNote") {
		if c := n.str("Content"); c != "" {
			o.Remarks = append(o.Remarks, c)
		}
	}
	if r := agr.str("BuyerReference"); r != "" {
		o.Remarks = append(o.Remarks, "Buyer reference: "+r)
	}
	for _, p := range []struct {
		e    *elem
		role order.Role
	}{
		{agr.kid("BuyerTradeParty"), order.RoleBuyer},
		{agr.kid("SellerTradeParty"), order.RoleSupplier},
		{del.kid("ShipToTradeParty"), order.RoleDelivery},
		{set.kid("InvoiceeTradeParty"), order.RoleInvoice},
	} {
		if p.e == nil {
			continue
		}
		party, extra := ciiParty(p.e, p.role)
		o.Parties = append(o.Parties, party)
		o.Remarks = append(o.Remarks, extra...)
	}
	o.DeliveryDate = ciiEventDate(&v, del.kid("RequestedDeliverySupplyChainEvent"), "delivery date")
	o.PaymentTerms = ciiPaymentTerms(set)
	o.Remarks = append(o.Remarks, allowanceCharges(set)...)
	o.Totals = ciiTotals(&v, set.kid("SpecifiedTradeSettlementHeaderMonetarySummation"))
	for i, li := range tx.all("IncludedSupplyChainTradeLineItem") {
		o.Items = append(o.Items, ciiItem(&v, li, i))
	}
	if v.err != nil {
		return v.err
	}
	d.Order = o
	return nil
}

// ciiPaymentTerms joins the descriptions of the payment terms.
func ciiPaymentTerms(set *elem) string {
	var terms []string
	for _, t := range set.all("SpecifiedTradePaymentTerms") {
		if s := t.str("Description"); s != "" {
			terms = append(terms, s)
		}
	}
	return strings.Join(terms, "; ")
}

// ciiTotals reads the header's monetary summation; a value that does not
// convert is recorded in v.
func ciiTotals(v *values, sum *elem) order.Totals {
	net := sum.str("TaxBasisTotalAmount")
	if net == "" {
		net = sum.str("LineTotalAmount")
	}
	return order.Totals{
		NetAmount:   v.decimal(net, "TaxBasisTotalAmount"),
		TaxAmount:   v.decimal(sum.str("TaxTotalAmount"), "TaxTotalAmount"),
		GrossAmount: v.decimal(sum.str("GrandTotalAmount"), "GrandTotalAmount"),
		// The arithmetic checks need what lies between the lines and the
		// net total: header allowances and charges.
		LinesAmount: v.decimal(sum.str("LineTotalAmount"), "LineTotalAmount"),
		Charges:     v.decimal(sum.str("ChargeTotalAmount"), "ChargeTotalAmount"),
		Allowances:  v.decimal(sum.str("AllowanceTotalAmount"), "AllowanceTotalAmount"),
	}
}

// ciiEventDate is a requested delivery event's date: its occurrence date,
// else the start of its period.
func ciiEventDate(v *values, ev *elem, what string) order.Date {
	if ev == nil {
		return order.Date{}
	}
	if e := ev.at("OccurrenceDateTime", "DateTimeString"); e != nil {
		return v.ciiDate(e, what)
	}
	return v.ciiDate(ev.at("OccurrenceSpecifiedPeriod", "StartDateTime", "DateTimeString"), what)
}

// schemeGLN is the ISO 6523 ICD of GS1 GLNs; schemeGTIN the one of GTINs.
const (
	schemeGLN  = "0088"
	schemeGTIN = "0160"
)

// ciiParty maps a CII trade party. The party's own ID is the buyer's number
// for it (Order-X is the buyer's message); without one its GLN is the id.
// Further identifiers (a GLN beside the ID, the legal registration) become
// OtherIDs; tax registrations other than the VAT id, which openTRANS has no
// place for, come back as remarks.
func ciiParty(e *elem, role order.Role) (order.Party, []string) {
	p := order.Party{Role: role}
	var extra []string
	add := func(id, typ string) {
		if id == "" {
			return
		}
		if p.ID == "" {
			p.ID, p.IDType = id, typ
			return
		}
		p.OtherIDs = append(p.OtherIDs, order.PartyID{ID: id, Type: typ})
	}
	add(e.str("ID"), "buyer_specific")
	for _, g := range e.all("GlobalID") {
		if g.attr("schemeID") == schemeGLN {
			add(g.text, "gln")
		} else {
			add(g.text, "party_specific")
		}
	}
	add(e.str("SpecifiedLegalOrganization", "ID"), "party_specific")
	for _, t := range e.all("SpecifiedTaxRegistration") {
		id := t.kid("ID")
		switch {
		case id.text == "":
		case id.attr("schemeID") == "VA" && p.VATID == "":
			p.VATID = id.text
		default:
			extra = append(extra, fmt.Sprintf("%s tax registration (scheme %s): %s", role, id.attr("schemeID"), id.text))
		}
	}
	a := &p.Address
	a.Name = e.str("Name")
	if a.Name == "" {
		a.Name = e.str("SpecifiedLegalOrganization", "TradingBusinessName")
	}
	c := e.kid("DefinedTradeContact")
	a.Contact = c.str("PersonName")
	a.Name2 = c.str("DepartmentName")
	a.Phone = c.str("TelephoneUniversalCommunication", "CompleteNumber")
	a.Email = c.str("EmailURIUniversalCommunication", "URIID")
	if a.Email == "" {
		a.Email = e.str("URIUniversalCommunication", "URIID")
	}
	pa := e.kid("PostalTradeAddress")
	a.Street = joinNonEmpty(", ", pa.str("LineOne"), pa.str("LineTwo"), pa.str("LineThree"))
	a.Zip, a.City = pa.str("PostcodeCode"), pa.str("CityName")
	a.CountryCoded = pa.str("CountryID")
	a.State = pa.str("CountrySubDivisionName")
	return p, extra
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, sep)
}

// ciiItem maps one IncludedSupplyChainTradeLineItem.
func ciiItem(v *values, li *elem, i int) order.Item {
	doc := li.kid("AssociatedDocumentLineDocument")
	prod := li.kid("SpecifiedTradeProduct")
	agr := li.kid("SpecifiedLineTradeAgreement")
	del := li.kid("SpecifiedLineTradeDelivery")
	set := li.kid("SpecifiedLineTradeSettlement")
	it := order.Item{
		Position:          doc.str("LineID"),
		SupplierArticleID: prod.str("SellerAssignedID"),
		BuyerArticleID:    prod.str("BuyerAssignedID"),
		Description:       prod.str("Name"),
		LongDescription:   prod.str("Description"),
	}
	what := func(f string) string { return fmt.Sprintf("line %d (%s) %s", i+1, it.Position, f) }
	for _, g := range prod.all("GlobalID") {
		if g.text == "" {
			continue
		}
		if g.attr("schemeID") == schemeGTIN && it.EAN == "" {
			it.EAN = g.text
		} else {
			it.Remarks = append(it.Remarks, fmt.Sprintf("Global id (scheme %s): %s", g.attr("schemeID"), g.text))
		}
	}
	for _, n := range doc.all("IncludedNote") {
		if c := n.str("Content"); c != "" {
			it.Remarks = append(it.Remarks, c)
		}
	}
	q := del.kid("RequestedQuantity")
	if q == nil {
		q = del.kid("AgreedQuantity")
	}
	if q != nil {
		it.Quantity = v.decimal(q.text, what("quantity"))
		it.Unit = q.attr("unitCode")
	}
	price := agr.kid("NetPriceProductTradePrice")
	it.UnitPrice = v.decimal(price.str("ChargeAmount"), what("net price"))
	if b := price.kid("BasisQuantity"); b != nil {
		it.PriceBasisQuantity = v.decimal(b.text, what("price basis quantity"))
		if u := b.attr("unitCode"); u != "" && it.Unit != "" && u != it.Unit {
			it.Remarks = append(it.Remarks, fmt.Sprintf("Price basis unit: %s", u))
		}
	}
	it.LineAmount = v.decimal(set.str("SpecifiedTradeSettlementLineMonetarySummation", "LineTotalAmount"), what("line total"))
	it.Remarks = append(it.Remarks, allowanceCharges(set)...)
	it.TaxRate = v.decimal(set.str("ApplicableTradeTax", "RateApplicablePercent"), what("tax rate"))
	it.DeliveryDate = ciiEventDate(v, del.kid("RequestedDeliverySupplyChainEvent"), what("delivery date"))
	return it
}

// allowanceCharges describes the SpecifiedTradeAllowanceCharge children of
// a settlement ("Allowance 31.00 (SPECIAL AGREEMENT)", "Charge 21.00
// (FREIGHT SERVICES)"): the canonical model has no place for them, and they
// explain why line totals and the net total differ.
func allowanceCharges(set *elem) []string {
	var out []string
	for _, ac := range set.all("SpecifiedTradeAllowanceCharge") {
		kind := "Allowance"
		if ac.str("ChargeIndicator", "Indicator") == "true" {
			kind = "Charge"
		}
		s := kind + " " + ac.str("ActualAmount")
		if p := ac.str("CalculationPercent"); p != "" {
			s += " (" + p + " % of " + ac.str("BasisAmount") + ")"
		}
		if r := joinNonEmpty(" ", ac.str("ReasonCode"), ac.str("Reason")); r != "" {
			s += ": " + r
		}
		out = append(out, s)
	}
	return out
}
