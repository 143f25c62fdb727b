package template

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

// Mapper resolves master-data mappings (buyer article number → supplier
// article number, delivery address → delivery party id, …). The processor
// implements it on PostgreSQL per client. ok is false when the table has no
// entry for key; err is for failures of the lookup itself.
type Mapper interface {
	Lookup(ctx context.Context, kind, key string) (value string, ok bool, err error)
}

// OutcomeStatus is how a document ends after its template ran.
type OutcomeStatus string

// Outcome statuses. Deferred means a mapping was missing
// (MAPPING_NOT_RESOLVED): the processor retries later.
const (
	OutcomeSuccess  OutcomeStatus = "success"
	OutcomeRejected OutcomeStatus = "rejected"
	OutcomeIgnored  OutcomeStatus = "ignored"
	OutcomeDeferred OutcomeStatus = "deferred"
)

// Outcome is the verdict on a document: success, rejected or ignored with a
// reason, or deferred for a missing mapping.
type Outcome struct {
	Status OutcomeStatus
	Reason document.Reason // empty on success and for ignored documents
	Detail string          // for people: which keyword, field or mapping
	// Feedback is set for ignored documents whose template asks for a
	// webhook (docintake.ignored_feedback).
	Feedback bool
}

func (o *Outcome) String() string {
	s := string(o.Status)
	if o.Reason != "" {
		s += " " + o.Reason.WireValue()
	}
	if o.Detail != "" {
		s += ": " + o.Detail
	}
	return s
}

// Item-level canonical fields (keys of a lines row).
var itemFields = map[string]bool{"position": true, "supplier_article_id": true, "buyer_article_id": true, "ean": true,
	"description": true, "long_description": true, "quantity": true, "unit": true, "unit_price": true,
	"price_basis_quantity": true, "line_amount": true, "tax_rate": true, "line_delivery_date": true, "remark": true,
	"discount_percent": true, "discount_amount": true}

// mappableFields are the canonical fields a mapping may read or write.
var mappableFields = map[string]bool{
	"buyer_article_id": true, "supplier_article_id": true, "ean": true, "unit": true,
	"buyer_id": true, "supplier_id": true, "delivery_id": true, "invoice_id": true,
	"delivery_address": true, "buyer_name": true, "delivery_name": true,
}

// rejectReason is the reason for "this is not our document type".
func rejectReason(dt order.DocumentType) document.Reason {
	switch dt {
	case order.TypeOrderResponse:
		return document.ReasonNotAnOrderResponse
	case order.TypeInvoice:
		return document.ReasonNotAnInvoice
	}
	return document.ReasonNotAnOrder
}

// Order turns an extraction into the canonical order and decides the
// outcome, with the reasons of DESIGN.md "Reasons from templates", checked
// in this order:
//
//  1. a docintake rule fires → ignored, or rejected with its reason (default:
//     not_an_order / not_an_order_response / not_an_invoice by document_type);
//  2. an exclude keyword matched → rejected with the same default reason;
//  3. the keywords do not match → rejected unknown_format;
//  4. required_fields missing → document_id_missing (order id),
//     cannot_parse_items (lines) or unknown_format (others);
//  5. no order id → document_id_missing;
//  6. docintake.required vat_id (buyer's for orders, supplier's otherwise),
//     buyer_vat_id, supplier_vat_id missing → vat_id_missing;
//  7. docintake.required delivery_address and no delivery party with a name,
//     street and city or zip → cannot_parse_delivery_address;
//  8. no order date and no docintake.date_fallback → unknown_format;
//  9. no items, an item without quantity or (unless
//     allow_nonpositive_quantity) with a quantity of 0 or below, and mode ≠
//     no_items → cannot_parse_items;
//  10. an arithmetic check fails (line amount, net total, gross total,
//     quantity total; see Checks) → cannot_parse_items with the numbers;
//  11. a mapping lookup misses → deferred mapping_not_resolved.
//
// The order is returned for every outcome (as far as it could be built).
// The error is non-nil when the mapper fails or, after steps 1 to 3, a
// canonical value cannot be read (an ambiguous date, a malformed amount,
// several values, a match timeout): the template, not the document, needs
// fixing; it is an EINVALID *document.Error naming the field.
func (t *Template) Order(ctx context.Context, res *Result, m Mapper, mode document.ResultMode, tr *Trace) (*order.Order, *Outcome, error) {
	return t.order(ctx, newMeter(ctx, t.Name, 0), res, m, mode, tr)
}

// order is Order whose rules run under the budget b (Run's, shared with
// the extraction).
func (t *Template) order(ctx context.Context, b *meter, res *Result, m Mapper, mode document.ResultMode, tr *Trace) (*order.Order, *Outcome, error) {
	check := func(format string, args ...any) {
		if tr != nil {
			tr.Checks = append(tr.Checks, fmt.Sprintf(format, args...))
		}
	}
	// A value that does not convert is the template's error, but only for
	// a document the template accepts as its own: rules, exclude keywords
	// and keywords decide first.
	o, valueErr := t.canonical(res, mode, tr)
	dt := t.DocIntake.DocumentType
	reject := func(r document.Reason, format string, args ...any) (*order.Order, *Outcome, error) {
		out := &Outcome{Status: OutcomeRejected, Reason: r, Detail: fmt.Sprintf(format, args...)}
		check("outcome: %s", out)
		return o, out, nil
	}
	for i, r := range t.DocIntake.Rules {
		subject, where := res.text, "text"
		if r.Field != "" {
			v, _ := res.Fields.Get(r.Field)
			subject, where = valueText(v), "field "+r.Field
		}
		b.at(fmt.Sprintf("rules[%d]", i))
		mm, err := r.Match.search(b, subject)
		if b.stop() != nil {
			return o, nil, b.result()
		}
		if err != nil || mm == nil {
			check("rule %d (%s %q in %s): no match", i, r.Action, r.Match.Source, where)
			continue
		}
		check("rule %d (%s %q in %s): matched %q", i, r.Action, r.Match.Source, where, subject[mm[0]:mm[1]])
		if r.Action == ActionIgnore {
			out := &Outcome{Status: OutcomeIgnored, Detail: fmt.Sprintf("rule %q matched", r.Match.Source), Feedback: t.DocIntake.IgnoredFeedback}
			check("outcome: %s", out)
			return o, out, nil
		}
		reason := r.Reason
		if reason == "" {
			reason = rejectReason(dt)
		}
		return reject(reason, "rule %q matched %q", r.Match.Source, subject[mm[0]:mm[1]])
	}
	if res.Excluded {
		return reject(rejectReason(dt), "exclude keyword %q found", res.Keywords.ExcludeHit)
	}
	if !res.Matched {
		return reject(document.ReasonUnknownFormat, "keywords not found: %s", quoteAll(res.Keywords.Failed))
	}
	if valueErr != nil {
		return o, nil, valueErr
	}
	if len(res.Missing) > 0 {
		for _, f := range res.Missing {
			switch f {
			case "order_id", "invoice_number", "document_id":
				return reject(document.ReasonDocumentIDMissing, "required field %s not found", f)
			case "lines", "items":
				if mode != document.ResultModeNoItems {
					return reject(document.ReasonCannotParseItems, "required field %s not found", f)
				}
			}
		}
		return reject(document.ReasonUnknownFormat, "required fields not found: %s", strings.Join(res.Missing, ", "))
	}
	out, err := t.Verify(ctx, o, m, mode, tr)
	return o, out, err
}

// Verify decides an order already built (by Order from the text, or read
// from a structured document attached to the PDF) by the docintake block:
// steps 5 to 11 of Order (order id, required VAT ids and delivery address,
// order date, items and quantities, arithmetic checks, mappings). Mappings
// may change o. The error is non-nil only when the mapper fails.
func (t *Template) Verify(ctx context.Context, o *order.Order, m Mapper, mode document.ResultMode, tr *Trace) (*Outcome, error) {
	check := func(format string, args ...any) {
		if tr != nil {
			tr.Checks = append(tr.Checks, fmt.Sprintf(format, args...))
		}
	}
	reject := func(rj *rejection) (*Outcome, error) {
		out := &Outcome{Status: OutcomeRejected, Reason: rj.reason, Detail: rj.detail}
		check("outcome: %s", out)
		return out, nil
	}
	if o.ID == "" {
		return reject(rejectf(document.ReasonDocumentIDMissing, "no order id (field order_id)"))
	}
	check("order id %q", o.ID)
	if rj := t.verifyRequired(o, check); rj != nil {
		return reject(rj)
	}
	if o.IssueDate.IsZero() {
		if t.DocIntake.DateFallback == "" {
			return reject(rejectf(document.ReasonUnknownFormat, "no order date (field date); set docintake.date_fallback: receipt to date such orders by the day they were received"))
		}
		check("no order date: the receipt date will be used (docintake.date_fallback: receipt)")
	}
	if mode != document.ResultModeNoItems {
		if rj := t.verifyItems(o); rj != nil {
			return reject(rj)
		}
		check("%d items", len(o.Items))
	}
	if rj := t.verifyArithmetic(o, check); rj != nil {
		return reject(rj)
	}
	for _, mp := range t.DocIntake.Mappings {
		out, err := t.applyMapping(ctx, o, mp, m, check)
		if err != nil || out != nil {
			return out, err
		}
	}
	out := &Outcome{Status: OutcomeSuccess}
	check("outcome: %s", out)
	return out, nil
}

// rejection is why Verify rejects an order: the reason and the detail for
// people.
type rejection struct {
	reason document.Reason
	detail string
}

func rejectf(r document.Reason, format string, args ...any) *rejection {
	return &rejection{reason: r, detail: fmt.Sprintf(format, args...)}
}

// verifyRequired checks the fields docintake.required names (order_id and
// items are always checked elsewhere).
func (t *Template) verifyRequired(o *order.Order, check func(string, ...any)) *rejection {
	for _, req := range t.DocIntake.Required {
		switch req {
		case "vat_id", "buyer_vat_id", "supplier_vat_id":
			role := order.RoleBuyer
			if req == "supplier_vat_id" || (req == "vat_id" && t.DocIntake.DocumentType != order.TypeOrder) {
				role = order.RoleSupplier
			}
			p, _ := o.Party(role)
			if p.VATID == "" {
				return rejectf(document.ReasonVATIDMissing, "no VAT id for the %s (field %s_vat_id)", role, role)
			}
			check("required %s: %q", req, p.VATID)
		case "delivery_address":
			p, ok := o.Party(order.RoleDelivery)
			a := p.Address
			if !ok || (a.Name == "" && len(a.Lines) == 0) || (len(a.Lines) == 0 && (a.Street == "" || (a.City == "" && a.Zip == ""))) {
				return rejectf(document.ReasonCannotParseDeliveryAddress, "delivery address needs delivery_name, delivery_street and delivery_city or delivery_zip (or delivery_address)")
			}
			check("required delivery_address: %s", strings.Join(addressLines(a), " / "))
		case "order_id", "items":
			// Always checked.
		}
	}
	return nil
}

// verifyItems requires at least one item and a quantity on every item,
// above zero unless docintake.allow_nonpositive_quantity.
func (t *Template) verifyItems(o *order.Order) *rejection {
	if len(o.Items) == 0 {
		return rejectf(document.ReasonCannotParseItems, "no line items (field lines)")
	}
	for i, it := range o.Items {
		if it.Quantity == "" {
			return rejectf(document.ReasonCannotParseItems, "line %d (position %s%s) has no quantity", i+1, it.Position, describe(it))
		}
		if !t.DocIntake.AllowNonPositiveQuantity && (strings.HasPrefix(it.Quantity, "-") || isZeroDecimal(it.Quantity)) {
			return rejectf(document.ReasonCannotParseItems, "line %d (position %s%s) has quantity %s; set docintake.allow_nonpositive_quantity to accept it",
				i+1, it.Position, describe(it), it.Quantity)
		}
	}
	return nil
}

// verifyArithmetic runs the arithmetic checks (CheckOrder), tracing the
// values it filled in, and rejects the order with every failed check.
func (t *Template) verifyArithmetic(o *order.Order, check func(string, ...any)) *rejection {
	fails, made := t.CheckOrder(o)
	for _, m := range made {
		check("%s", m)
	}
	if len(fails) > 0 {
		details := make([]string, len(fails))
		for i, f := range fails {
			details[i] = f.Check + ": " + f.Detail
		}
		return rejectf(document.ReasonCannotParseItems, "arithmetic check failed: %s", strings.Join(details, "; "))
	}
	return nil
}

func (t *Template) applyMapping(ctx context.Context, o *order.Order, mp Mapping, m Mapper, check func(string, ...any)) (*Outcome, error) {
	lookup := func(key string) (string, *Outcome, error) {
		if key == "" {
			return "", nil, nil
		}
		if m == nil {
			return "", &Outcome{Status: OutcomeDeferred, Reason: document.ReasonMappingNotResolved,
				Detail: fmt.Sprintf("no mapper for %s %q", mp.Kind, key)}, nil
		}
		v, ok, err := m.Lookup(ctx, mp.Kind, key)
		if err != nil {
			return "", nil, fmt.Errorf("template: mapping %s %q: %w", mp.Kind, key, err)
		}
		if !ok {
			check("mapping %s %q: missing", mp.Kind, key)
			if mp.Optional {
				return "", nil, nil
			}
			return "", &Outcome{Status: OutcomeDeferred, Reason: document.ReasonMappingNotResolved,
				Detail: fmt.Sprintf("%s (field %s)", MissingMapping(mp.Kind, key), mp.From)}, nil
		}
		check("mapping %s %q → %q", mp.Kind, key, v)
		return v, nil, nil
	}
	if itemFields[mp.From] {
		for i := range o.Items {
			it := &o.Items[i]
			v, out, err := lookup(itemValue(it, mp.From))
			if err != nil || out != nil {
				return out, err
			}
			if v != "" {
				setItemValue(it, mp.To, v)
			}
		}
		return nil, nil
	}
	v, out, err := lookup(headerValue(o, mp.From))
	if err != nil || out != nil {
		return out, err
	}
	if v != "" {
		setHeaderValue(o, mp.To, v)
	}
	return nil, nil
}

func itemValue(it *order.Item, f string) string {
	switch f {
	case "buyer_article_id":
		return it.BuyerArticleID
	case "supplier_article_id":
		return it.SupplierArticleID
	case "ean":
		return it.EAN
	case "unit":
		return it.Unit
	}
	return ""
}

func setItemValue(it *order.Item, f, v string) {
	switch f {
	case "buyer_article_id":
		it.BuyerArticleID = v
	case "supplier_article_id":
		it.SupplierArticleID = v
	case "ean":
		it.EAN = v
	case "unit":
		it.Unit = v
	}
}

var roleOfPrefix = map[string]order.Role{"buyer": order.RoleBuyer, "supplier": order.RoleSupplier,
	"delivery": order.RoleDelivery, "invoice": order.RoleInvoice}

func headerValue(o *order.Order, f string) string {
	prefix, suffix, _ := strings.Cut(f, "_")
	p, _ := o.Party(roleOfPrefix[prefix])
	switch suffix {
	case "id":
		return p.ID
	case "name":
		return p.Address.Name
	case "address":
		return strings.Join(addressLines(p.Address), "\n")
	}
	return ""
}

func setHeaderValue(o *order.Order, f, v string) {
	prefix, suffix, _ := strings.Cut(f, "_")
	role := roleOfPrefix[prefix]
	idx := -1
	for i := range o.Parties {
		if o.Parties[i].Role == role {
			idx = i
		}
	}
	if idx < 0 {
		o.Parties = append(o.Parties, order.Party{Role: role})
		idx = len(o.Parties) - 1
	}
	switch suffix {
	case "id":
		o.Parties[idx].ID, o.Parties[idx].IDType = v, "supplier_specific"
	case "name":
		o.Parties[idx].Address.Name = v
	}
}

// addressLines is the address as printed, or rebuilt from its parts.
func addressLines(a order.Address) []string {
	if len(a.Lines) > 0 {
		return a.Lines
	}
	var out []string
	for _, s := range []string{a.Name, a.Name2, a.Street, strings.TrimSpace(a.Zip + " " + a.City), a.Country} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// singleValued lists the header fields that may hold several values (an
// address printed over several matches, remarks); every other header field
// holds one value, and several distinct values are an error.
func singleValued(name string) bool {
	return !strings.HasSuffix(name, "_address") && name != "remarks" && name != "remark"
}

// canonical builds the order from the extracted fields (names as in
// docs/templates.md "Canonical fields"). It never invents or merges a
// value: several distinct values for a single-valued field, a number that
// does not fit the declared separators, a date that does not parse and a
// regex that timed out are errors naming the field and the text; a typed
// value whose text is blank is missing.
func (t *Template) canonical(res *Result, mode document.ResultMode, tr *Trace) (*order.Order, error) {
	r := &fieldReader{t: t, res: res}
	o := &order.Order{Type: t.DocIntake.DocumentType, NoItems: mode == document.ResultModeNoItems}
	for _, name := range sortedKeys(res.failed) {
		r.errs = append(r.errs, fmt.Sprintf("field %s: %s", name, res.failed[name]))
	}
	idKeys := []string{"order_id", "document_id"}
	if o.Type != order.TypeOrder {
		idKeys = append(idKeys, "invoice_number")
	}
	o.ID = r.str(idKeys...)
	o.IssueDate = r.date("date")
	o.DeliveryDate = r.date("delivery_date")
	o.Currency = r.currency()
	o.Language = r.str("language")
	o.BuyerOrderID = r.str("buyer_order_id")
	o.PaymentTerms = r.str("payment_terms")
	o.Remarks = textList(res.Fields, "remarks", "remark")
	for _, prefix := range []string{"buyer", "supplier", "delivery", "invoice"} {
		if p := r.party(prefix); !partyEmpty(p) {
			o.Parties = append(o.Parties, p)
		}
	}
	r.totals(&o.Totals)
	if mode != document.ResultModeNoItems {
		r.items(o, tr)
		t.defaultUnit(o)
	}
	if len(r.errs) > 0 {
		return o, &document.Error{Kind: document.EINVALID, Code: "template_value",
			Message: fmt.Sprintf("template %s: %s", t.Name, strings.Join(r.errs, "; "))}
	}
	return o, nil
}

// fieldReader reads canonical values from a template's result for
// canonical, collecting every value that does not convert in errs (in the
// order the values are read) instead of stopping at the first.
type fieldReader struct {
	t    *Template
	res  *Result
	errs []string
}

// one returns a header field's single value (nil when absent).
func (r *fieldReader) one(name string) any {
	v, ok := r.res.Fields.Get(name)
	if !ok {
		return nil
	}
	if list, ok := v.([]any); ok && singleValued(name) {
		switch len(list) {
		case 0:
			return nil
		case 1:
			return list[0]
		}
		r.errs = append(r.errs, fmt.Sprintf("field %s: several values %s", name, quoteValues(list)))
		return nil
	}
	return v
}

// str returns the first non-blank text among the fields keys.
func (r *fieldReader) str(keys ...string) string {
	for _, k := range keys {
		if s := strings.TrimSpace(valueText(r.one(k))); s != "" {
			return s
		}
	}
	return ""
}

func (r *fieldReader) date(name string) order.Date {
	vf := r.t.fieldFormat(name)
	v := r.one(name)
	if v == nil {
		// A date that did not parse is left out of invoice2data's
		// output; its error is the canonical order's.
		for _, e := range r.res.Errors {
			if strings.HasPrefix(e, "field "+name+":") {
				r.errs = append(r.errs, e)
			}
		}
		return order.Date{}
	}
	d, err := r.t.date(v, vf)
	if err != nil {
		r.errs = append(r.errs, fmt.Sprintf("field %s: %v", name, err))
	}
	return d
}

// amount returns the first of the header amounts names that is present.
func (r *fieldReader) amount(names ...string) string {
	for _, name := range names {
		d, ok, err := r.t.headerAmount(r.res, name)
		if err != nil {
			r.errs = append(r.errs, fmt.Sprintf("field %s: %v", name, err))
			return ""
		}
		if ok {
			return d
		}
	}
	return ""
}

// currency is the printed currency, else the one the template states.
// invoice2data's output always carries options.currency (EUR unless set);
// the order carries a currency only when one is printed or the template
// states it.
func (r *fieldReader) currency() string {
	var cur string
	switch c := r.res.printedCurrency.(type) {
	case []any:
		if len(c) > 1 {
			r.errs = append(r.errs, fmt.Sprintf("field currency: several values %s", quoteValues(c)))
		} else if len(c) == 1 {
			cur = strings.TrimSpace(valueText(c[0]))
		}
	case nil:
	default:
		cur = strings.TrimSpace(valueText(c))
	}
	if cur == "" && r.t.Options.CurrencySet {
		cur = r.t.Options.Currency
	}
	return cur
}

// party reads the party whose fields start with prefix (buyer_name, …).
func (r *fieldReader) party(prefix string) order.Party {
	p := order.Party{Role: roleOfPrefix[prefix]}
	p.ID = r.str(prefix + "_id")
	p.IDType = r.str(prefix + "_id_type")
	if gln := r.str(prefix + "_gln"); gln != "" && p.ID == "" {
		p.ID, p.IDType = gln, "gln"
	}
	p.VATID = r.str(prefix + "_vat_id")
	a := &p.Address
	a.Name, a.Name2, a.Contact = r.str(prefix+"_name"), r.str(prefix+"_name2"), r.str(prefix+"_contact")
	a.Street, a.Zip, a.City = r.str(prefix+"_street"), r.str(prefix+"_zip"), r.str(prefix+"_city")
	a.State, a.Country, a.CountryCoded = r.str(prefix+"_state"), r.str(prefix+"_country"), r.str(prefix+"_country_code")
	a.Phone, a.Email = r.str(prefix+"_phone"), r.str(prefix+"_email")
	if addr := r.str(prefix + "_address"); addr != "" {
		for _, l := range strings.Split(addr, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				a.Lines = append(a.Lines, l)
			}
		}
	}
	return p
}

func (r *fieldReader) totals(tot *order.Totals) {
	tot.NetAmount = r.amount("total_net", "amount_untaxed")
	tot.TaxAmount = r.amount("total_tax", "amount_tax")
	tot.GrossAmount = r.amount("total_gross", "amount")
	tot.LinesAmount = r.amount("total_lines")
	tot.Charges = r.amount("total_charges")
	tot.Allowances = r.amount("total_allowances")
	tot.ExtraCharges = r.amount("total_extra_charges")
	tot.Quantity = r.amount("total_quantity")
}

// items appends an item to o for every lines (or items) row that holds an
// item field; other rows are section headers or notes.
func (r *fieldReader) items(o *order.Order, tr *Trace) {
	rowsV, ok := r.res.Fields.Get("lines")
	if !ok {
		rowsV, _ = r.res.Fields.Get("items")
	}
	rows, _ := rowsV.([]any)
	for i, v := range rows {
		row, ok := v.(*Object)
		if !ok {
			continue
		}
		if !hasAny(row, "quantity", "description", "supplier_article_id", "buyer_article_id", "ean", "line_amount") {
			continue // a section header or note row
		}
		it, rowErrs := r.t.item(row, i)
		r.errs = append(r.errs, rowErrs...)
		if tr != nil {
			tr.Rows = append(tr.Rows, rowTrace(row, i, rowErrs))
		}
		if it.Position == "" {
			it.Position = strconv.Itoa(len(o.Items) + 1)
		}
		o.Items = append(o.Items, it)
	}
}

// item builds one order line from a lines row; errors name the row
// (lines[i].field) and the text.
func (t *Template) item(row *Object, i int) (order.Item, []string) {
	var errs []string
	for _, k := range row.Keys() {
		if row.joined[k] && !textRowKeys[k] {
			v, _ := row.Get(k)
			errs = append(errs, fmt.Sprintf("field lines[%d].%s: several values %q (continued on another line)", i, k, valueText(v)))
		}
	}
	vf := t.format(row.format)
	rs := func(k string) string {
		v, _ := row.Get(k)
		return strings.TrimSpace(valueText(v))
	}
	rd := func(k string) string {
		if row.joined[k] {
			return "" // reported above
		}
		d, err := rowAmount(row, k, vf.DecimalSeparator)
		if err != nil {
			errs = append(errs, fmt.Sprintf("field lines[%d].%s: %v", i, k, err))
		}
		return d
	}
	it := order.Item{
		Position: rs("position"), SupplierArticleID: rs("supplier_article_id"), BuyerArticleID: rs("buyer_article_id"),
		EAN: rs("ean"), Description: rs("description"), LongDescription: rs("long_description"),
		Quantity: rd("quantity"), Unit: rs("unit"), UnitPrice: rd("unit_price"),
		PriceBasisQuantity: rd("price_basis_quantity"), LineAmount: rd("line_amount"),
		DiscountAmount: rd("discount_amount"),
	}
	if it.PriceBasisQuantity != "" && isZeroDecimal(it.PriceBasisQuantity) {
		errs = append(errs, fmt.Sprintf("field lines[%d].price_basis_quantity: a price per 0 units", i))
		it.PriceBasisQuantity = ""
	}
	for _, pc := range []struct {
		k string
		p *string
	}{{"tax_rate", &it.TaxRate}, {"discount_percent", &it.DiscountPercent}} {
		if row.joined[pc.k] {
			continue // reported above
		}
		d, err := rowPercent(row, pc.k, vf.DecimalSeparator)
		if err != nil {
			errs = append(errs, fmt.Sprintf("field lines[%d].%s: %v", i, pc.k, err))
		}
		*pc.p = d
	}
	src := rowText(row, "line_delivery_date")
	if v, ok := row.Get("line_delivery_date"); ok && strings.TrimSpace(src) != "" {
		d, err := t.date(v, vf)
		if raw, ok := row.raw["line_delivery_date"]; ok {
			d, err = t.date(raw, vf)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("field lines[%d].line_delivery_date: %v", i, err))
		}
		it.DeliveryDate = d
	}
	if r := rs("remark"); r != "" {
		it.Remarks = append(it.Remarks, r)
	}
	return it, errs
}

// rowPercent reads a percentage column ("19", "19,00 %", "75.00 %",
// "75%"): the number before the percent sign, strictly with the row's
// decimal separator; "" when absent or blank.
func rowPercent(row *Object, k, decimalSep string) (string, error) {
	v, _ := row.Get(k)
	if _, printed := row.raw[k]; !printed {
		// A typed value (an attached order's canonical decimal) needs no
		// separator, as rowAmount reads the other numbers.
		if f, isFloat := v.(Float); isFloat {
			return decimalOf(f)
		}
	}
	s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(valueText(v)), "%"))
	if s == "" {
		return "", nil
	}
	return ParseAmount(s, decimalSep)
}

// defaultUnit gives the lines that print no unit the template's
// default_unit. Without one they are written in pieces (C62) as before,
// but no longer silently: a remark on the order names them, so that a
// person sees that 12 may have meant 12 boxes.
func (t *Template) defaultUnit(o *order.Order) {
	var missing []string
	for i := range o.Items {
		if strings.TrimSpace(o.Items[i].Unit) != "" {
			continue
		}
		if t.DocIntake.DefaultUnit != "" {
			o.Items[i].Unit = t.DocIntake.DefaultUnit
			continue
		}
		missing = append(missing, o.Items[i].Position)
	}
	switch {
	case len(missing) == 0:
	case len(missing) == len(o.Items):
		o.Remarks = append(o.Remarks, fmt.Sprintf("No unit printed: every quantity is written in pieces (%s)", opentrans.DefaultUnit))
	default:
		o.Remarks = append(o.Remarks, fmt.Sprintf("No unit printed for position %s: their quantities are written in pieces (%s)",
			strings.Join(missing, ", "), opentrans.DefaultUnit))
	}
}

// rowTrace renders a lines row for the debug view: every value as printed,
// then the errors of the values that did not convert.
func rowTrace(row *Object, i int, errs []string) RowTrace {
	rt := RowTrace{Index: i, Errors: errs}
	for _, k := range row.Keys() {
		rt.Values = append(rt.Values, [2]string{k, rowText(row, k)})
	}
	return rt
}

// textRowKeys are the item fields a continuation line may extend (a
// wrapped description); every other item field holds one value.
var textRowKeys = map[string]bool{"description": true, "long_description": true, "remark": true}

// rowText is the text of a row's value: its source text when typed.
func rowText(row *Object, k string) string {
	if raw, ok := row.raw[k]; ok {
		return raw
	}
	v, _ := row.Get(k)
	return valueText(v)
}

// rowAmount reads a row's number strictly from its printed text: "" when
// absent or blank (missing, never 0), an error when it holds several
// values (continued on several lines) or does not fit the separators.
func rowAmount(row *Object, k, decimalSep string) (string, error) {
	if _, ok := row.raw[k]; !ok {
		if v, ok := row.Get(k); ok {
			switch x := v.(type) {
			case Float, int64:
				return decimalOf(x)
			}
		}
	}
	s := strings.TrimSpace(rowText(row, k))
	if s == "" {
		return "", nil
	}
	if strings.Contains(s, "\n") {
		return "", fmt.Errorf("several values %q", strings.Split(s, "\n"))
	}
	return ParseAmount(trimCurrency(s), decimalSep)
}

// headerAmount reads a header amount strictly from the text its regex
// found; ok is false when the field is absent or blank.
func (t *Template) headerAmount(res *Result, name string) (string, bool, error) {
	v, present := res.Fields.Get(name)
	fs := t.field(name)
	raw, hasRaw := res.rawValues[name]
	if fs == nil || !hasRaw {
		if !present || !truthy(v) {
			return "", false, nil
		}
		d, err := t.decimal(v)
		return d, d != "", err
	}
	sep := t.format(fs.Format).DecimalSeparator
	var distinct []string
	for _, r := range raw {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if _, err := ParseAmount(trimCurrency(r), sep); err != nil {
			return "", false, err
		}
		if !slices.Contains(distinct, r) {
			distinct = append(distinct, r)
		}
	}
	switch {
	case len(distinct) == 0:
		return "", false, nil
	case fs.Group != "":
		// sum, min, max, first, last: the group decides; the texts were
		// checked above.
		d, err := t.decimal(v)
		return d, d != "", err
	case len(distinct) > 1:
		return "", false, fmt.Errorf("several values %q", distinct)
	}
	d, err := ParseAmount(trimCurrency(distinct[0]), sep)
	return d, err == nil, err
}

// field returns the template's field named name (nil when none).
func (t *Template) field(name string) *Field {
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// fieldFormat is the value format of the header field name.
func (t *Template) fieldFormat(name string) ValueFormat {
	if f := t.field(name); f != nil {
		return t.format(f.Format)
	}
	return t.format(ValueFormat{})
}

func trimCurrency(s string) string {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "$€£¥"))
	return s
}

func isZeroDecimal(d string) bool { return strings.Trim(d, "-0.") == "" }

func quoteValues(list []any) string {
	q := make([]string, len(list))
	for i, v := range list {
		q[i] = fmt.Sprintf("%q", valueText(v))
	}
	return strings.Join(q, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func partyEmpty(p order.Party) bool {
	a := p.Address
	return p.ID == "" && p.VATID == "" && len(a.Lines) == 0 &&
		a.Name+a.Name2+a.Contact+a.Street+a.Zip+a.City+a.State+a.Country+a.CountryCoded+a.Phone+a.Email == ""
}

func hasAny(row *Object, keys ...string) bool {
	for _, k := range keys {
		if v, ok := row.Get(k); ok && truthy(v) {
			return true
		}
	}
	return false
}

// textList reads a remarks-like field: a string, a list of strings or rows.
func textList(f *Object, key, rowKey string) []string {
	v, ok := f.Get(key)
	if !ok {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case *Object:
			e, _ := x.Get(rowKey)
			walk(e)
		default:
			if s := strings.TrimSpace(valueText(x)); s != "" {
				out = append(out, s)
			}
		}
	}
	walk(v)
	return out
}

// valueText renders a value as text: strings as they are, numbers in their
// exact decimal form, dates as YYYY-MM-DD, lists newline-joined.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case Float:
		if x.Dec != "" {
			return x.Dec
		}
		return pyRepr(x.F)
	case order.Date:
		return x.String()
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, valueText(e))
		}
		return strings.Join(parts, "\n")
	}
	return fmt.Sprint(v)
}

// decimalOf is the exact decimal of a parsed number.
func decimalOf(v any) (string, error) {
	switch x := v.(type) {
	case Float:
		if x.Dec != "" {
			return x.Dec, nil
		}
		if math.IsInf(x.F, 0) || math.IsNaN(x.F) {
			return "", fmt.Errorf("%v is not a number", x.F)
		}
		return strconv.FormatFloat(x.F, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("%v is not a number", v)
}

// decimal converts an extracted value (a static value or a table's) to a
// canonical decimal string; text is read strictly.
func (t *Template) decimal(v any) (string, error) {
	switch x := v.(type) {
	case Float, int64:
		return decimalOf(x)
	case string:
		return ParseAmount(trimCurrency(x), t.Options.DecimalSeparator)
	case []any:
		return "", fmt.Errorf("several values %s", quoteValues(x))
	}
	return "", fmt.Errorf("%v is not a number", v)
}

func (t *Template) date(v any, vf ValueFormat) (order.Date, error) {
	switch x := v.(type) {
	case order.Date:
		return x, nil
	case string:
		return ParseDate(x, vf.DateFormats, t.Options.Languages)
	case []any:
		return order.Date{}, fmt.Errorf("several values %s", quoteValues(x))
	}
	return order.Date{}, fmt.Errorf("%v is not a date", v)
}
