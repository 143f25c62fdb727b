package opentrans

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
)

// Namespaces of openTRANS 2.1 documents.
const (
	NamespaceOpenTRANS = "http://www.opentrans.org/XMLSchema/2.1"
	NamespaceBMEcat    = "http://www.bmecat.org/bmecat/2005"
	namespaceXSI       = "http://www.w3.org/2001/XMLSchema-instance"
)

// WriteOptions are the parts of a document that do not come from the order.
type WriteOptions struct {
	// Generator is written as CONTROL_INFO/GENERATOR_INFO. Defaults to
	// "docintake".
	Generator string
	// GenerationTime is written as CONTROL_INFO/GENERATION_DATE when set. Its
	// date also stands in for a document date the PDF did not print (with a
	// note saying so); when it is zero the current date is used there.
	GenerationTime time.Time
	// DefaultCurrency is written as an invoice's CURRENCY (mandatory there)
	// when the invoice has none from the openTRANS list. Defaults to "EUR".
	// Orders and order responses omit CURRENCY instead.
	DefaultCurrency string
	// ChangeSequence is an ORDERCHANGE's ORDERCHANGE_SEQUENCE_ID: 1 for
	// the first change of an order, +1 for each further one. 0 means 1.
	ChangeSequence int
}

// kind holds the element names that differ between the document types.
type kind struct {
	root, header, info, date, itemList, item, summary, remarkType string
}

var kinds = map[order.DocumentType]kind{
	order.TypeOrder: {"ORDER", "ORDER_HEADER", "ORDER_INFO", "ORDER_DATE",
		"ORDER_ITEM_LIST", "ORDER_ITEM", "ORDER_SUMMARY", "order"},
	order.TypeOrderResponse: {"ORDERRESPONSE", "ORDERRESPONSE_HEADER", "ORDERRESPONSE_INFO", "ORDERRESPONSE_DATE",
		"ORDERRESPONSE_ITEM_LIST", "ORDERRESPONSE_ITEM", "ORDERRESPONSE_SUMMARY", "orderresponse"},
	order.TypeInvoice: {"INVOICE", "INVOICE_HEADER", "INVOICE_INFO", "INVOICE_DATE",
		"INVOICE_ITEM_LIST", "INVOICE_ITEM", "INVOICE_SUMMARY", "invoice"},
	order.TypeOrderChange: {"ORDERCHANGE", "ORDERCHANGE_HEADER", "ORDERCHANGE_INFO", "ORDERCHANGE_DATE",
		"ORDERCHANGE_ITEM_LIST", "ORDER_ITEM", "ORDERCHANGE_SUMMARY", "orderchange"},
}

// partyRoles is the PARTY_ROLE enumeration of openTRANS 2.1.
var partyRoles = codeSet(`buyer central_regulator customer deliverer delivery document_creator final_delivery
intermediary invoice_issuer invoice_recipient ipp_operator manufacturer marketplace payer remittee
standardization_body supplier trustedthirdparty other`)

// roleInvoiceIssuer is a role Read gives parties of foreign invoices; the
// model itself names the issuer supplier.
const roleInvoiceIssuer order.Role = "invoice_issuer"

var partyIDTypes = []string{"buyer_specific", "customer_specific", "duns", "iln", "gln", "party_specific", "supplier_specific"}

// Marshal returns the openTRANS document for o; see Write.
func Marshal(o *order.Order, opts WriteOptions) ([]byte, error) {
	var buf bytes.Buffer
	if err := Write(&buf, o, opts); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes o as an openTRANS 2.1 ORDER, ORDERCHANGE, ORDERRESPONSE or
// INVOICE (o.Type) in UTF-8. The document is valid against opentrans_2_1.xsd, except
// for result_mode no_items (o.NoItems): the item list is then written empty
// and TOTAL_ITEM_NUM is 0, the one documented departure from the schema.
//
// Values are cleaned (see clean), units and codes mapped to the schema's
// lists, and what has no valid place in openTRANS is kept in REMARKS notes
// that Read turns back into the model; doc.go has the full mapping.
//
// Returns EINVALID, before anything is written to w, when o cannot become a
// document: unknown type, no document id, no items without NoItems, a
// quantity, price or amount that is not a canonical decimal, an impossible
// date, or an invoice item without unit price or line amount.
func Write(w io.Writer, o *order.Order, opts WriteOptions) error {
	root, err := build(o, opts)
	if err != nil {
		return err
	}
	if err := encodeDocument(w, root); err != nil {
		return fmt.Errorf("opentrans: write: %w", err)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return document.Errorf(document.EINVALID, "opentrans: "+format, args...)
}

// builder carries the state of one Write.
type builder struct {
	o    order.Order
	k    kind
	opts WriteOptions
	head notes
}

func build(in *order.Order, opts WriteOptions) (*node, error) {
	if in == nil {
		return nil, invalid("no order")
	}
	k, ok := kinds[in.Type]
	if !ok {
		return nil, invalid("document type %q is not order, order_change, order_response or invoice", in.Type)
	}
	if opts.Generator == "" {
		opts.Generator = "docintake"
	}
	if opts.DefaultCurrency == "" {
		opts.DefaultCurrency = "EUR"
	}
	if _, ok := currencyCode(opts.DefaultCurrency); !ok {
		return nil, invalid("default currency %q is not in the openTRANS currency list", opts.DefaultCurrency)
	}
	b := &builder{o: *in, k: k, opts: opts, head: notes{}}
	return b.document()
}

func (b *builder) document() (*node, error) {
	o := &b.o
	h := headerInfo{typ: o.Type, sequence: b.opts.ChangeSequence}
	var err error
	h.ids, h.split, err = b.documentIDs()
	if err != nil {
		return nil, err
	}
	if h.date, err = b.issueDate(); err != nil {
		return nil, err
	}
	if h.delivery, err = b.deliveryDate(o.DeliveryDate); err != nil {
		return nil, err
	}
	h.language = b.language()
	h.currency = b.currency()
	if pt := clean(o.PaymentTerms); pt != "" {
		b.head.add(notePaymentTerms, pt)
	}

	var lines []int
	h.parties, h.refs, lines, err = b.parties()
	if err != nil {
		return nil, err
	}

	items, err := b.items()
	if err != nil {
		return nil, err
	}
	summary, err := b.summary(len(items))
	if err != nil {
		return nil, err
	}

	info := &node{name: b.k.info}
	info.add(h.nodes()...)
	slots := headerSlots(&order.Order{Type: o.Type}, h.split, make([][]*order.Party, len(lines)), lines)
	info.add(b.remarks(b.head.ordered(slots), o.Remarks)...)

	header := el(b.k.header, b.control(), info)
	if o.Type == order.TypeInvoice {
		header.add(el("ORDER_HISTORY", leaf("ORDER_ID", h.ids[1])))
	}
	list := &node{name: b.k.itemList, kids: items}
	root := el(b.k.root, header, list, summary)
	root.attrs = rootAttrs(o.Type)
	return root, nil
}

// documentIDs returns the texts of the document's id fields (idFields),
// the first of which is required. An order response is the supplier's
// document: its own number goes to SUPPLIER_ORDER_ID and ORDER_ID is the
// buyer's order it answers; with only one number that one is the ORDER_ID
// (split reports the two numbers).
func (b *builder) documentIDs() (ids []string, split bool, err error) {
	o := &b.o
	o.ID, o.BuyerOrderID = clean(o.ID), clean(o.BuyerOrderID)
	if o.Type == order.TypeOrderResponse && o.ID == "" {
		o.ID, o.BuyerOrderID = o.BuyerOrderID, ""
	}
	split = o.Type == order.TypeOrderResponse && o.BuyerOrderID != ""
	fields := idFields(o, split)
	ids = make([]string, len(fields))
	for i, f := range fields {
		ids[i] = b.field(f, f.elem, b.head)
	}
	if ids[0] == "" {
		return nil, false, invalid("%s is missing (the order has no id)", fields[0].elem)
	}
	if o.Type == order.TypeOrder && o.BuyerOrderID != "" {
		b.head.add(noteBuyerOrderID, o.BuyerOrderID)
	}
	return ids, split, nil
}

// issueDate is the document date; a document without one is dated by the
// generation time, with a note saying so.
func (b *builder) issueDate() (string, error) {
	date, err := b.date(b.o.IssueDate, b.k.date)
	if err != nil {
		return "", err
	}
	if date == "" {
		now := b.opts.GenerationTime
		if now.IsZero() {
			now = time.Now()
		}
		date = order.DateOf(now).String()
		b.head.add(noteNoDate, date)
	}
	return date, nil
}

// language is the LANGUAGE element, or nil with a note for a language
// outside the BMEcat list.
func (b *builder) language() *node {
	lang := clean(b.o.Language)
	if code, ok := languageCode(lang); ok {
		return leaf("bmecat:LANGUAGE", code, "default", "true")
	}
	if lang != "" {
		b.head.add(noteLanguage, lang)
	}
	return nil
}

// headerInfo holds the parts of the header's info element, which each
// document type arranges in its own order.
type headerInfo struct {
	typ                                   order.DocumentType
	sequence                              int // ORDERCHANGE only
	ids                                   []string
	split                                 bool
	date                                  string
	delivery, language, parties, currency *node
	refs                                  refs
}

// nodes returns the info element's children before its remarks.
func (h *headerInfo) nodes() []*node {
	r := h.refs
	switch h.typ {
	case order.TypeOrder:
		return []*node{leaf("ORDER_ID", h.ids[0]), leaf("ORDER_DATE", h.date), h.delivery, h.language, h.parties,
			el("ORDER_PARTIES_REFERENCE", r.buyer, r.supplier, r.invoiceRecipient,
				el("SHIPMENT_PARTIES_REFERENCE", r.delivery)),
			h.currency}
	case order.TypeOrderResponse:
		out := []*node{leaf("ORDER_ID", h.ids[0]), leaf("ORDERRESPONSE_DATE", h.date)}
		if h.split {
			out = append(out, leaf("SUPPLIER_ORDER_ID", h.ids[1]))
		}
		return append(out, h.delivery, h.language, h.parties,
			el("ORDER_PARTIES_REFERENCE", r.buyer, r.supplier, r.invoiceRecipient,
				el("SHIPMENT_PARTIES_REFERENCE", r.delivery)),
			h.currency)
	case order.TypeOrderChange:
		return orderChangeInfo(h.ids[0], h.date, h.sequence, h.delivery, h.language, h.parties, r, h.currency)
	case order.TypeInvoice:
		return []*node{leaf("INVOICE_ID", h.ids[0]), leaf("INVOICE_DATE", h.date), h.delivery, r.deliveryInvoice,
			h.language, h.parties, r.issuer, r.recipient, r.buyer, r.supplier, h.currency}
	}
	return nil
}

func attr(name, value string) xml.Attr { return xml.Attr{Name: xml.Name{Local: name}, Value: value} }

func rootAttrs(t order.DocumentType) []xml.Attr {
	a := []xml.Attr{
		attr("xmlns", NamespaceOpenTRANS),
		attr("xmlns:bmecat", NamespaceBMEcat),
		attr("xmlns:xsi", namespaceXSI),
		attr("xsi:schemaLocation", NamespaceOpenTRANS+" opentrans_2_1.xsd"),
		attr("version", "2.1"),
	}
	if t == order.TypeOrder {
		a = append(a, attr("type", "standard"))
	}
	return a
}

func (b *builder) control() *node {
	var gen *node
	if t := b.opts.GenerationTime; !t.IsZero() && t.Year() >= 1 && t.Year() <= 9999 {
		gen = leaf("GENERATION_DATE", t.Format("2006-01-02T15:04:05Z07:00"))
	}
	g := limit(clean(b.opts.Generator), 250)
	return el("CONTROL_INFO", leaf("GENERATOR_INFO", g), gen)
}

// field cleans and, if needed, truncates a limited text field; a truncated
// value is kept whole in a note keyed by key.
func (b *builder) field(f textField, key string, ns notes) string {
	v := clean(*f.ptr)
	t, cut := truncate(v, f.max)
	if cut {
		// Trimmed again so that the reader, which trims, sees the same text.
		t = strings.TrimSpace(t)
		ns.add(noteFullValue+key, v)
	}
	return t
}

func (b *builder) date(d order.Date, what string) (string, error) {
	if d.IsZero() {
		return "", nil
	}
	t := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
	if d.Year < 1 || d.Year > 9999 || t.Year() != d.Year || t.Month() != d.Month || t.Day() != d.Day {
		return "", invalid("%s %04d-%02d-%02d is not a date", what, d.Year, int(d.Month), d.Day)
	}
	return d.String(), nil
}

// deliveryDate writes a single requested date as start and end of the
// DELIVERY_DATE range (type "fixed" is the schema default).
func (b *builder) deliveryDate(d order.Date) (*node, error) {
	s, err := b.date(d, "DELIVERY_DATE")
	if err != nil || s == "" {
		return nil, err
	}
	return el("DELIVERY_DATE", leaf("DELIVERY_START_DATE", s), leaf("DELIVERY_END_DATE", s)), nil
}

// currency returns the CURRENCY element: the code when it is in the schema's
// list; otherwise nothing for orders and order responses (CURRENCY is
// optional; the agreed currency applies) and the default for invoices
// (CURRENCY is mandatory), with the printed value in a note either way.
func (b *builder) currency() *node {
	printed := clean(b.o.Currency)
	code, ok := currencyCode(printed)
	if printed != "" && !ok {
		b.head.add(noteCurrency, printed)
	}
	if printed == "" || !ok {
		code = ""
	}
	if b.o.Type == order.TypeInvoice && code == "" {
		code, _ = currencyCode(b.opts.DefaultCurrency)
		if printed == "" {
			b.head.add(noteCurrencyDefault, code)
		}
	}
	return leaf("bmecat:CURRENCY", code)
}

func (b *builder) decimal(v, what string) (string, error) {
	v = clean(v)
	if v != "" && !checkDecimal(v) {
		return "", invalid("%s %q is not a decimal number (digits, optional '-' and '.')", what, v)
	}
	return v, nil
}

func (b *builder) remarks(notes, remarks []string) []*node {
	var out []*node
	for _, n := range notes {
		out = append(out, leaf("REMARKS", n, "type", b.k.remarkType))
	}
	for _, r := range remarks {
		r = limit(clean(r), maxRemark)
		out = append(out, leaf("REMARKS", r, "type", b.k.remarkType))
	}
	return out
}

// refs are the IDREF elements pointing at the written parties.
type refs struct {
	buyer, supplier, invoiceRecipient, delivery       *node
	issuer, recipient, deliveryInvoice, invoiceIssuer *node
}

// parties writes PARTIES and the references to them. Every party gets a
// PARTY_ID (generated from its role when the model has none: "buyer",
// "supplier", ...), and parties the document type requires but the model
// lacks are added with only an id and a role, so that every IDREF points at
// a PARTY of the document. lines returns each PARTY's ADDRESS_REMARKS count.
func (b *builder) parties() (*node, refs, []int, error) {
	ps := b.partiesWithRequiredRoles()
	used := make(map[string]bool)
	for _, p := range ps {
		used[limit(clean(p.ID), 250)] = true
	}
	list := &node{name: "PARTIES"}
	var r refs
	lines := make([]int, len(ps))
	for i := range ps {
		p := &ps[i]
		idType := cleanToken(p.IDType, partyIDTypes...)
		text := make(map[string]string)
		for _, f := range partyFields(p) {
			text[f.elem] = b.field(f, partyKey(i, f.elem), b.head)
		}
		id := uniquePartyID(text["bmecat:PARTY_ID"], p.Role, used)
		var addr *node
		addr, lines[i] = b.partyAddress(i, p, text)
		ids := append([]*node{leaf("bmecat:PARTY_ID", id, "type", idType)}, otherPartyIDs(p)...)
		list.add(el("PARTY", append(ids, leaf("PARTY_ROLE", partyRole(p.Role)), addr)...))
		r.point(p.Role, id, idType)
	}
	// An invoice comes from its issuer, or else from the supplier, and goes
	// to the invoice recipient, or else to the buyer.
	if r.invoiceIssuer != nil {
		r.issuer = r.invoiceIssuer
	}
	r.recipient = r.invoiceRecipient
	if r.recipient == nil && r.buyer != nil {
		r.recipient = &node{name: "INVOICE_RECIPIENT_IDREF", attrs: r.buyer.attrs, text: r.buyer.text}
	}
	return list, r, lines, nil
}

// partiesWithRequiredRoles returns the order's parties followed by an
// empty party for every role the document type requires but the order
// lacks: buyer and supplier, or for an invoice an issuer (else supplier)
// and a recipient (else buyer).
func (b *builder) partiesWithRequiredRoles() []order.Party {
	ps := append([]order.Party(nil), b.o.Parties...)
	has := func(r order.Role) bool {
		for _, p := range ps {
			if p.Role == r {
				return true
			}
		}
		return false
	}
	need := []order.Role{order.RoleBuyer, order.RoleSupplier}
	if b.o.Type == order.TypeInvoice {
		need = nil
		if !has(order.RoleSupplier) && !has(roleInvoiceIssuer) {
			need = append(need, order.RoleSupplier)
		}
		if !has(order.RoleInvoice) && !has(order.RoleBuyer) {
			need = append(need, order.RoleInvoice)
		}
	}
	for _, r := range need {
		if !has(r) {
			ps = append(ps, order.Party{Role: r})
		}
	}
	return ps
}

// uniquePartyID returns id, or for a party without one an id generated
// from its role ("buyer", "buyer-2", ...) that no other party uses.
func uniquePartyID(id string, role order.Role, used map[string]bool) string {
	if id != "" {
		return id
	}
	base := "party"
	if partyRoles[string(role)] {
		base = string(role)
	}
	id = base
	for n := 2; used[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	used[id] = true
	return id
}

// partyRole is the PARTY_ROLE of role: "other" for a role openTRANS does
// not know, empty for none.
func partyRole(role order.Role) string {
	if role == "" {
		return ""
	}
	if partyRoles[string(role)] {
		return string(role)
	}
	return "other"
}

// partyAddress writes the ADDRESS of party i from its field texts, with
// the address lines as ADDRESS_REMARKS (lines counts them); a country code
// outside the BMEcat list becomes a header note.
func (b *builder) partyAddress(i int, p *order.Party, text map[string]string) (addr *node, lines int) {
	var country *node
	if cc := clean(p.Address.CountryCoded); cc != "" {
		if code, ok := countryCode(cc); ok {
			country = leaf("bmecat:COUNTRY_CODED", code)
		} else {
			b.head.add(partyKey(i, "Printed country code (not in the BMEcat country list)"), cc)
		}
	}
	var remarks []*node
	for _, l := range p.Address.Lines {
		l = clean(l)
		if l == "" {
			continue
		}
		f := textField{"bmecat:ADDRESS_REMARKS", 250, &l}
		remarks = append(remarks, leaf("bmecat:ADDRESS_REMARKS", b.field(f, partyKey(i, lineKey(f.elem, len(remarks))), b.head)))
	}
	addr = el("ADDRESS",
		leaf("bmecat:NAME", text["bmecat:NAME"]),
		leaf("bmecat:NAME2", text["bmecat:NAME2"]),
		el("CONTACT_DETAILS", leaf("bmecat:CONTACT_NAME", text["bmecat:CONTACT_NAME"])),
		leaf("bmecat:STREET", text["bmecat:STREET"]),
		leaf("bmecat:ZIP", text["bmecat:ZIP"]),
		leaf("bmecat:CITY", text["bmecat:CITY"]),
		leaf("bmecat:STATE", text["bmecat:STATE"]),
		leaf("bmecat:COUNTRY", text["bmecat:COUNTRY"]),
		country,
		leaf("bmecat:VAT_ID", text["bmecat:VAT_ID"]),
		leaf("bmecat:PHONE", text["bmecat:PHONE"]),
		leaf("bmecat:EMAIL", text["bmecat:EMAIL"]),
	)
	if addr != nil {
		addr.add(remarks...)
	} else if len(remarks) > 0 {
		addr = &node{name: "ADDRESS", kids: remarks}
	}
	return addr, len(remarks)
}

// point sets the references a party of role is the first of to its id.
func (r *refs) point(role order.Role, id, idType string) {
	ref := func(slot **node, name string) {
		if *slot == nil {
			*slot = leaf(name, id, "type", idType)
		}
	}
	switch role {
	case order.RoleBuyer:
		ref(&r.buyer, "bmecat:BUYER_IDREF")
	case order.RoleSupplier:
		ref(&r.supplier, "bmecat:SUPPLIER_IDREF")
		ref(&r.issuer, "INVOICE_ISSUER_IDREF")
	case roleInvoiceIssuer:
		ref(&r.invoiceIssuer, "INVOICE_ISSUER_IDREF")
	case order.RoleInvoice:
		ref(&r.invoiceRecipient, "INVOICE_RECIPIENT_IDREF")
	case order.RoleDelivery:
		ref(&r.delivery, "DELIVERY_IDREF")
		ref(&r.deliveryInvoice, "DELIVERY_IDREF")
	}
}

func (b *builder) items() ([]*node, error) {
	if b.o.NoItems {
		return nil, nil
	}
	if len(b.o.Items) == 0 {
		return nil, invalid("the order has no items (result_mode no_items sets NoItems)")
	}
	out := make([]*node, 0, len(b.o.Items))
	for i := range b.o.Items {
		n, err := b.item(i, b.o.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func (b *builder) item(i int, it order.Item) (*node, error) {
	ns := notes{}
	text := make(map[string]string)
	for _, f := range itemFields(&it) {
		text[f.elem] = b.field(f, f.elem, ns)
	}
	pos := text["LINE_ITEM_ID"]
	if pos == "" {
		pos = strconv.Itoa(i + 1)
	}
	what := func(field string) string { return fmt.Sprintf("item %d (LINE_ITEM_ID %s): %s", i+1, pos, field) }

	qty, err := b.decimal(it.Quantity, what("QUANTITY"))
	if err != nil {
		return nil, err
	}
	if qty == "" {
		return nil, invalid("%s is missing", what("QUANTITY"))
	}
	unit := clean(it.Unit)
	code, known := UnitCode(unit)
	if !known {
		ns.add(noteUnit, unit)
	}
	priceFix, amount, err := b.itemPrice(&it, qty, ns, what)
	if err != nil {
		return nil, err
	}
	delivery, err := b.deliveryDate(it.DeliveryDate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what("DELIVERY_DATE"), err)
	}
	if b.o.Type == order.TypeInvoice && delivery != nil {
		// INVOICE_ITEM has no DELIVERY_DATE.
		ns.add(noteDeliveryDate, it.DeliveryDate.String())
		delivery = nil
	}
	n := el(b.k.item,
		leaf("LINE_ITEM_ID", pos),
		productID(text, limit(clean(it.LongDescription), 64000)),
		leaf("QUANTITY", qty),
		leaf("bmecat:ORDER_UNIT", code),
		priceFix,
		leaf("PRICE_LINE_AMOUNT", amount),
		delivery,
	)
	n.add(b.remarks(ns.ordered(itemSlots(&order.Item{}, b.o.Type, "")), it.Remarks)...)
	return n, nil
}

// itemPrice writes an item's PRODUCT_PRICE_FIX (price, allowances, tax and
// price basis) and returns it with the line amount. An invoice item needs
// a price and a line amount; without a price the tax rate and the price
// basis have no element to go to and become notes.
func (b *builder) itemPrice(it *order.Item, qty string, ns notes, what func(string) string) (priceFix *node, amount string, err error) {
	price, err := b.decimal(it.UnitPrice, what("PRICE_AMOUNT"))
	if err != nil {
		return nil, "", err
	}
	basis, err := b.decimal(it.PriceBasisQuantity, what("PRICE_QUANTITY"))
	if err != nil {
		return nil, "", err
	}
	rate, err := b.decimal(it.TaxRate, what("tax rate"))
	if err != nil {
		return nil, "", err
	}
	amount, err = b.decimal(it.LineAmount, what("PRICE_LINE_AMOUNT"))
	if err != nil {
		return nil, "", err
	}
	if b.o.Type == order.TypeInvoice && (price == "" || amount == "") {
		return nil, "", invalid("%s: an invoice item needs a unit price and a line amount", what("PRODUCT_PRICE_FIX"))
	}
	allow, err := b.allowances(it, qty, price, basis, ns, what)
	if err != nil {
		return nil, "", err
	}
	if price == "" {
		// Without a price there is no PRODUCT_PRICE_FIX to carry them.
		if rate != "" {
			ns.add(noteTaxRate, rate)
		}
		if basis != "" {
			ns.add(notePriceBasis, basis)
		}
		return nil, amount, nil
	}
	var tax *node
	if rate != "" {
		factor := shiftDecimal(rate, -2)
		if !checkDecimal(factor) {
			return nil, "", invalid("%s %q is out of range", what("tax rate"), rate)
		}
		tax = el("TAX_DETAILS_FIX", leaf("bmecat:TAX_TYPE", "vat"), leaf("bmecat:TAX", factor))
	}
	return el("PRODUCT_PRICE_FIX", leaf("bmecat:PRICE_AMOUNT", price), allow, tax, leaf("bmecat:PRICE_QUANTITY", basis)), amount, nil
}

// productID writes PRODUCT_ID, mandatory even when the line names no
// article.
func productID(text map[string]string, long string) *node {
	pid := &node{name: "PRODUCT_ID"}
	pid.add(
		leaf("bmecat:SUPPLIER_PID", text["bmecat:SUPPLIER_PID"], "type", "supplier_specific"),
		leaf("bmecat:INTERNATIONAL_PID", text["bmecat:INTERNATIONAL_PID"], "type", "gtin"),
		leaf("bmecat:BUYER_PID", text["bmecat:BUYER_PID"], "type", "buyer_specific"),
		leaf("bmecat:DESCRIPTION_SHORT", text["bmecat:DESCRIPTION_SHORT"]),
		leaf("bmecat:DESCRIPTION_LONG", long),
	)
	return pid
}

func (b *builder) summary(count int) (*node, error) {
	t := b.o.Totals
	net, err := b.decimal(t.NetAmount, "net amount")
	if err != nil {
		return nil, err
	}
	tax, err := b.decimal(t.TaxAmount, "tax amount")
	if err != nil {
		return nil, err
	}
	gross, err := b.decimal(t.GrossAmount, "TOTAL_AMOUNT")
	if err != nil {
		return nil, err
	}
	// Document-level charges and allowances have no element here; they
	// travel as notes, as the arithmetic checks read them.
	for _, n := range []struct{ label, v, what string }{{noteLinesAmount, t.LinesAmount, "lines amount"},
		{noteCharges, t.Charges, "charges"}, {noteAllowances, t.Allowances, "allowances"}, {noteExtraCharges, t.ExtraCharges, "extra charges"},
		{noteTotalQuantity, t.Quantity, "total quantity"}} {
		v, err := b.decimal(n.v, n.what)
		if err != nil {
			return nil, err
		}
		if v != "" {
			b.head.add(n.label, v)
		}
	}
	num := leaf("TOTAL_ITEM_NUM", strconv.Itoa(count))
	if b.o.Type != order.TypeInvoice {
		// TOTAL_AMOUNT is defined as the gross total ("including surcharges,
		// deductions and all taxes"); a printed net total or tax would be
		// misread there, so they travel as notes.
		if net != "" {
			b.head.add(noteNetAmount, net)
		}
		if tax != "" {
			b.head.add(noteTaxAmount, tax)
		}
		return el(b.k.summary, num, leaf("TOTAL_AMOUNT", gross)), nil
	}
	if net == "" && !b.o.NoItems {
		amounts := make([]string, 0, len(b.o.Items))
		for _, it := range b.o.Items {
			amounts = append(amounts, clean(it.LineAmount))
		}
		net = addDecimals(amounts...)
	}
	if gross == "" && net != "" && tax != "" {
		gross = addDecimals(net, tax)
	}
	if net == "" || gross == "" {
		return nil, invalid("an invoice needs its net total and its gross total (or net total and tax)")
	}
	if !checkDecimal(net) || !checkDecimal(gross) {
		return nil, invalid("invoice totals %s / %s are out of range", net, gross)
	}
	return el(b.k.summary, num, leaf("NET_VALUE_GOODS", net), leaf("TOTAL_AMOUNT", gross),
		el("TOTAL_TAX", el("TAX_DETAILS_FIX", leaf("bmecat:TAX_TYPE", "vat"), leaf("TAX_AMOUNT", tax)))), nil
}
