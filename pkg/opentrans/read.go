package opentrans

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
)

// ErrUnsupported is wrapped by Read's error for a well-formed openTRANS
// document of a type other than ORDER, ORDERRESPONSE and INVOICE (ORDERCHANGE,
// DISPATCHNOTIFICATION, INVOICELIST, ...).
var ErrUnsupported = errors.New("unsupported openTRANS document type")

// Read parses an openTRANS 2.1 ORDER, ORDERRESPONSE or INVOICE, also wrapped
// in an OPENTRANS element, into the canonical model. It is the inverse of
// Write: Read(Write(o)) gives o back, notes included (see note.go), for any o
// whose values are already in the form Write produces (trimmed, codes from
// the lists, lengths within the schema's limits or restored from notes).
//
// The reader is lenient as partner files need it to be: elements are matched
// by local name whatever their namespace prefix, element order and unknown
// elements do not matter, missing mandatory elements give empty fields. Of
// repeated elements the first counts (INTERNATIONAL_PID: the first of type
// gtin, ean or upc). A PARTY with several PARTY_ROLEs becomes one party per
// role; an IDREF adds its role to the PARTY it names when no PARTY has that
// role in PARTY_ROLE (INVOICE_ISSUER_IDREF gives the role invoice_issuer
// unless it names the supplier). Of an item's allowances and surcharges the
// first percentage and the first amount are read as its discount (see
// allowance.go); a discount of zero, which Write does not write, reads as
// none. Document types other than the three, and elements the model has no
// field for, are not read.
//
// Documents may be UTF-8 or one of the single-byte charsets CharsetReader
// names.
//
// Returns EINVALID for input that is not well-formed XML or holds a number
// that is not an xsd:decimal, and EINVALID wrapping ErrUnsupported for other
// document types.
func Read(r io.Reader) (*order.Order, error) {
	dec := xml.NewDecoder(r)
	dec.CharsetReader = CharsetReader
	start, err := rootElement(dec)
	if err != nil {
		return nil, err
	}
	o := &order.Order{}
	var doc xDoc
	switch start.Name.Local {
	case "ORDER":
		o.Type = order.TypeOrder
	case "ORDERRESPONSE":
		o.Type = order.TypeOrderResponse
	case "INVOICE":
		o.Type = order.TypeInvoice
	default:
		return nil, &document.Error{Kind: document.EINVALID, Code: document.EINVALID,
			Message: fmt.Sprintf("opentrans: %s documents are not read", start.Name.Local), Err: ErrUnsupported}
	}
	if err := dec.DecodeElement(&doc, &start); err != nil {
		return nil, malformed(err)
	}
	if err := fill(o, &doc); err != nil {
		return nil, err
	}
	return o, nil
}

func malformed(err error) error {
	return &document.Error{Kind: document.EINVALID, Code: document.EINVALID,
		Message: "opentrans: not a well-formed XML document", Err: err}
}

// rootElement returns the document element, or the one inside an OPENTRANS
// envelope.
func rootElement(dec *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return xml.StartElement{}, malformed(err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local != "OPENTRANS" {
			return se, nil
		}
	}
}

// The x* types mirror the parts of the three document types that map to the
// model; field tags are local names so any namespace prefix matches.
type xDoc struct {
	OrderInfo    xInfo    `xml:"ORDER_HEADER>ORDER_INFO"`
	ResponseInfo xInfo    `xml:"ORDERRESPONSE_HEADER>ORDERRESPONSE_INFO"`
	InvoiceInfo  xInfo    `xml:"INVOICE_HEADER>INVOICE_INFO"`
	History      []string `xml:"INVOICE_HEADER>ORDER_HISTORY>ORDER_ID"`
	OrderItems   []xItem  `xml:"ORDER_ITEM_LIST>ORDER_ITEM"`
	Responses    []xItem  `xml:"ORDERRESPONSE_ITEM_LIST>ORDERRESPONSE_ITEM"`
	InvoiceItems []xItem  `xml:"INVOICE_ITEM_LIST>INVOICE_ITEM"`
	OrderSum     xSummary `xml:"ORDER_SUMMARY"`
	ResponseSum  xSummary `xml:"ORDERRESPONSE_SUMMARY"`
	InvoiceSum   xSummary `xml:"INVOICE_SUMMARY"`
}

type xInfo struct {
	OrderID         []string    `xml:"ORDER_ID"`
	SupplierOrderID []string    `xml:"SUPPLIER_ORDER_ID"`
	InvoiceID       []string    `xml:"INVOICE_ID"`
	OrderDate       []string    `xml:"ORDER_DATE"`
	ResponseDate    []string    `xml:"ORDERRESPONSE_DATE"`
	InvoiceDate     []string    `xml:"INVOICE_DATE"`
	Delivery        []xDelivery `xml:"DELIVERY_DATE"`
	Languages       []xLang     `xml:"LANGUAGE"`
	Parties         []xParty    `xml:"PARTIES>PARTY"`
	Buyer           []xRef      `xml:"ORDER_PARTIES_REFERENCE>BUYER_IDREF"`
	Supplier        []xRef      `xml:"ORDER_PARTIES_REFERENCE>SUPPLIER_IDREF"`
	InvRecipient    []xRef      `xml:"ORDER_PARTIES_REFERENCE>INVOICE_RECIPIENT_IDREF"`
	DeliveryRef     []xRef      `xml:"ORDER_PARTIES_REFERENCE>SHIPMENT_PARTIES_REFERENCE>DELIVERY_IDREF"`
	InvoiceBuyer    []xRef      `xml:"BUYER_IDREF"`
	InvoiceSupplier []xRef      `xml:"SUPPLIER_IDREF"`
	Issuer          []xRef      `xml:"INVOICE_ISSUER_IDREF"`
	Recipient       []xRef      `xml:"INVOICE_RECIPIENT_IDREF"`
	InvoiceDelivery []xRef      `xml:"DELIVERY_IDREF"`
	Currency        []string    `xml:"CURRENCY"`
	PaymentTerms    []string    `xml:"PAYMENT>PAYMENT_TERMS>PAYMENT_TERM"`
	Remarks         []string    `xml:"REMARKS"`
}

type xDelivery struct {
	Start string `xml:"DELIVERY_START_DATE"`
	End   string `xml:"DELIVERY_END_DATE"`
}

type xLang struct {
	Default string `xml:"default,attr"`
	Code    string `xml:",chardata"`
}

type xRef struct {
	Type  string `xml:"type,attr"`
	Value string `xml:",chardata"`
}

type xParty struct {
	IDs       []xRef     `xml:"PARTY_ID"`
	Roles     []string   `xml:"PARTY_ROLE"`
	Addresses []xAddress `xml:"ADDRESS"`
}

type xAddress struct {
	Name         []string   `xml:"NAME"`
	Name2        []string   `xml:"NAME2"`
	Contacts     []xContact `xml:"CONTACT_DETAILS"`
	Street       []string   `xml:"STREET"`
	Zip          []string   `xml:"ZIP"`
	City         []string   `xml:"CITY"`
	State        []string   `xml:"STATE"`
	Country      []string   `xml:"COUNTRY"`
	CountryCoded []string   `xml:"COUNTRY_CODED"`
	VATID        []string   `xml:"VAT_ID"`
	Phone        []string   `xml:"PHONE"`
	Email        []string   `xml:"EMAIL"`
	Remarks      []string   `xml:"ADDRESS_REMARKS"`
}

type xContact struct {
	Name   []string `xml:"CONTACT_NAME"`
	First  []string `xml:"FIRST_NAME"`
	Phone  []string `xml:"PHONE"`
	Emails []string `xml:"EMAILS>EMAIL"`
}

type xItem struct {
	LineItemID string      `xml:"LINE_ITEM_ID"`
	Supplier   []string    `xml:"PRODUCT_ID>SUPPLIER_PID"`
	Intl       []xRef      `xml:"PRODUCT_ID>INTERNATIONAL_PID"`
	Buyer      []string    `xml:"PRODUCT_ID>BUYER_PID"`
	Short      []string    `xml:"PRODUCT_ID>DESCRIPTION_SHORT"`
	Long       []string    `xml:"PRODUCT_ID>DESCRIPTION_LONG"`
	Quantity   string      `xml:"QUANTITY"`
	Unit       string      `xml:"ORDER_UNIT"`
	Price      []xPrice    `xml:"PRODUCT_PRICE_FIX"`
	LineAmount string      `xml:"PRICE_LINE_AMOUNT"`
	Delivery   []xDelivery `xml:"DELIVERY_DATE"`
	Remarks    []string    `xml:"REMARKS"`
}

type xPrice struct {
	Amount   string   `xml:"PRICE_AMOUNT"`
	Allow    []xAllow `xml:"ALLOW_OR_CHARGES_FIX>ALLOW_OR_CHARGE"`
	Taxes    []xTax   `xml:"TAX_DETAILS_FIX"`
	Quantity string   `xml:"PRICE_QUANTITY"`
}

type xTax struct {
	Tax    string `xml:"TAX"`
	Amount string `xml:"TAX_AMOUNT"`
}

type xSummary struct {
	Total string `xml:"TOTAL_AMOUNT"`
	Net   string `xml:"NET_VALUE_GOODS"`
	Taxes []xTax `xml:"TOTAL_TAX>TAX_DETAILS_FIX"`
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return clean(v[0])
}

// decimals converts numeric element values, stopping at the first that is
// not an xsd:decimal.
type decimals struct{ err error }

func (d *decimals) conv(v, what string) string {
	v = clean(v)
	if v == "" || d.err != nil {
		return ""
	}
	n, ok := order.CanonicalDecimal(v)
	if !ok {
		d.err = document.Errorf(document.EINVALID, "opentrans: %s %q is not a decimal number", what, v)
	}
	return n
}

func fill(o *order.Order, doc *xDoc) error {
	var info *xInfo
	var items []xItem
	var sum *xSummary
	split := false
	switch o.Type {
	case order.TypeOrder:
		info, items, sum = &doc.OrderInfo, doc.OrderItems, &doc.OrderSum
		o.ID, o.IssueDate = first(info.OrderID), parseDate(first(info.OrderDate))
	case order.TypeOrderResponse:
		info, items, sum = &doc.ResponseInfo, doc.Responses, &doc.ResponseSum
		o.ID, o.IssueDate = first(info.OrderID), parseDate(first(info.ResponseDate))
		if sid := first(info.SupplierOrderID); sid != "" {
			o.ID, o.BuyerOrderID, split = sid, o.ID, true
		}
	case order.TypeInvoice:
		info, items, sum = &doc.InvoiceInfo, doc.InvoiceItems, &doc.InvoiceSum
		o.ID, o.IssueDate = first(info.InvoiceID), parseDate(first(info.InvoiceDate))
		o.BuyerOrderID = first(doc.History)
	}
	o.DeliveryDate = deliveryDate(info.Delivery)
	for _, l := range info.Languages {
		if o.Language == "" || strings.EqualFold(strings.TrimSpace(l.Default), "true") {
			o.Language = clean(l.Code)
		}
	}
	o.Currency = first(info.Currency)
	if len(info.PaymentTerms) > 0 {
		var terms []string
		for _, t := range info.PaymentTerms {
			if t = clean(t); t != "" {
				terms = append(terms, t)
			}
		}
		o.PaymentTerms = strings.Join(terms, "; ")
	}

	byElement, lines := readParties(o, info)

	var d decimals
	for i := range items {
		o.Items = append(o.Items, readItem(&items[i], o.Type, &d))
	}
	o.NoItems = len(o.Items) == 0
	o.Totals.GrossAmount = d.conv(sum.Total, "TOTAL_AMOUNT")
	if o.Type == order.TypeInvoice {
		o.Totals.NetAmount = d.conv(sum.Net, "NET_VALUE_GOODS")
		var taxes []string
		for _, t := range sum.Taxes {
			if v := d.conv(t.Amount, "TAX_AMOUNT"); v != "" {
				taxes = append(taxes, v)
			}
		}
		switch len(taxes) {
		case 0:
		case 1:
			o.Totals.TaxAmount = taxes[0]
		default:
			o.Totals.TaxAmount = addDecimals(taxes...)
		}
	}
	if d.err != nil {
		return d.err
	}
	o.Remarks = applyNotes(cleanAll(info.Remarks), headerSlots(o, split, byElement, lines))
	return nil
}

func cleanAll(v []string) []string {
	var out []string
	for _, s := range v {
		if s = clean(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// deliveryDate reads a DELIVERY_DATE range as the model's single date: the
// end of the range, the latest acceptable day (the writer writes start = end).
func deliveryDate(ds []xDelivery) order.Date {
	if len(ds) == 0 {
		return order.Date{}
	}
	if d := parseDate(ds[0].End); !d.IsZero() {
		return d
	}
	return parseDate(ds[0].Start)
}

// readParties appends the model parties to o and returns, per PARTY element,
// the model parties made from it and its ADDRESS_REMARKS count (for notes).
func readParties(o *order.Order, info *xInfo) ([][]*order.Party, []int) {
	refs := readRefs(info)
	referenced := make(map[string]bool)
	for _, r := range refs {
		for _, id := range r.ids {
			referenced[clean(id.Value)] = true
		}
	}
	roles := elementRoles(info, refs)

	type made struct {
		p    order.Party
		from int
	}
	var all []made
	lines := make([]int, len(info.Parties))
	for i, xp := range info.Parties {
		var id xRef
		for k, cand := range xp.IDs {
			if k == 0 || (referenced[clean(cand.Value)] && !referenced[clean(id.Value)]) {
				id = cand
			}
		}
		base := order.Party{ID: clean(id.Value), IDType: clean(id.Type)}
		if len(xp.Addresses) > 0 {
			base.VATID, base.Address = readAddress(&xp.Addresses[0])
			lines[i] = len(base.Address.Lines)
		}
		if len(roles[i]) == 0 {
			roles[i] = []order.Role{""}
		}
		for _, r := range roles[i] {
			p := base
			p.Role = r
			p.Address.Lines = slices.Clone(base.Address.Lines)
			all = append(all, made{p, i})
		}
	}
	byElement := make([][]*order.Party, len(info.Parties))
	o.Parties = make([]order.Party, len(all))
	for k, m := range all {
		o.Parties[k] = m.p
		byElement[m.from] = append(byElement[m.from], &o.Parties[k])
	}
	if len(o.Parties) == 0 {
		o.Parties = nil
	}
	return byElement, lines
}

// readRef is the IDREFs of one role in a document's header. fallback is
// the role Write points the IDREF at when the model has no party of the
// IDREF's own role (see builder.parties).
type readRef struct {
	role, fallback order.Role
	ids            []xRef
}

func readRefs(info *xInfo) []readRef {
	return []readRef{
		{order.RoleBuyer, "", append(info.Buyer, info.InvoiceBuyer...)},
		{order.RoleSupplier, "", append(info.Supplier, info.InvoiceSupplier...)},
		{order.RoleInvoice, order.RoleBuyer, append(info.InvRecipient, info.Recipient...)},
		{order.RoleDelivery, "", append(info.DeliveryRef, info.InvoiceDelivery...)},
		{roleInvoiceIssuer, order.RoleSupplier, info.Issuer},
	}
}

// elementRoles returns the roles of each PARTY element. Roles come from
// PARTY_ROLE; an IDREF adds its role to the first PARTY it names when no
// PARTY claims that role itself (PARTY_ROLE is optional, and partners let
// ids repeat: buyer and delivery party often share the customer number, so
// an IDREF alone cannot tell them apart).
func elementRoles(info *xInfo, refs []readRef) [][]order.Role {
	roles := make([][]order.Role, len(info.Parties))
	claimed := make(map[order.Role]bool)
	for i, xp := range info.Parties {
		for _, r := range xp.Roles {
			if r := order.Role(clean(r)); r != "" && !slices.Contains(roles[i], r) {
				roles[i] = append(roles[i], r)
				claimed[r] = true
			}
		}
	}
	for _, r := range refs {
		if claimed[r.role] || len(r.ids) == 0 {
			continue
		}
		id := clean(r.ids[0].Value)
		for i, xp := range info.Parties {
			if hasID(xp.IDs, id) {
				if !slices.Contains(roles[i], r.role) && (r.fallback == "" || !slices.Contains(roles[i], r.fallback)) {
					roles[i] = append(roles[i], r.role)
				}
				break
			}
		}
	}
	return roles
}

func hasID(ids []xRef, id string) bool {
	for _, x := range ids {
		if clean(x.Value) == id {
			return true
		}
	}
	return false
}

func readAddress(a *xAddress) (string, order.Address) {
	addr := order.Address{
		Name:         first(a.Name),
		Name2:        first(a.Name2),
		Street:       first(a.Street),
		Zip:          first(a.Zip),
		City:         first(a.City),
		State:        first(a.State),
		Country:      first(a.Country),
		CountryCoded: first(a.CountryCoded),
		Phone:        first(a.Phone),
		Email:        first(a.Email),
		Lines:        cleanAll(a.Remarks),
	}
	if len(a.Contacts) > 0 {
		c := &a.Contacts[0]
		addr.Contact = strings.TrimSpace(first(c.First) + " " + first(c.Name))
		if addr.Phone == "" {
			addr.Phone = first(c.Phone)
		}
		if addr.Email == "" {
			addr.Email = first(c.Emails)
		}
	}
	return first(a.VATID), addr
}

func readItem(x *xItem, typ order.DocumentType, d *decimals) order.Item {
	it := order.Item{
		Position:          clean(x.LineItemID),
		SupplierArticleID: first(x.Supplier),
		BuyerArticleID:    first(x.Buyer),
		Description:       first(x.Short),
		LongDescription:   first(x.Long),
		Unit:              clean(x.Unit),
		DeliveryDate:      deliveryDate(x.Delivery),
	}
	what := func(elem string) string { return fmt.Sprintf("item %s: %s", it.Position, elem) }
	for _, p := range x.Intl {
		if t := strings.TrimSpace(p.Type); t == "" || t == "gtin" || t == "ean" || t == "upc" {
			it.EAN = clean(p.Value)
			break
		}
	}
	it.Quantity = d.conv(x.Quantity, what("QUANTITY"))
	perPrice := ""
	if len(x.Price) > 0 {
		p := &x.Price[0]
		it.UnitPrice = d.conv(p.Amount, what("PRICE_AMOUNT"))
		it.PriceBasisQuantity = d.conv(p.Quantity, what("PRICE_QUANTITY"))
		if it.UnitPrice != "" {
			it.DiscountPercent, perPrice = readAllowances(p.Allow)
		}
		for _, t := range p.Taxes {
			if f := d.conv(t.Tax, what("TAX")); f != "" {
				it.TaxRate = shiftDecimal(f, 2)
				break
			}
		}
	}
	it.LineAmount = d.conv(x.LineAmount, what("PRICE_LINE_AMOUNT"))
	it.Remarks = applyNotes(cleanAll(x.Remarks), itemSlots(&it, typ, perPrice))
	if it.DiscountAmount == "" && perPrice != "" {
		// A partner's document without our note: the line's amount from
		// the amount per price unit, when it is exact.
		it.DiscountAmount, _ = lineDiscount(perPrice, it.Quantity, it.PriceBasisQuantity)
	}
	return it
}
