package template

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/order"
	"gopkg.in/yaml.v3"
)

// EmbeddedMode is docintake.embedded: what a business document attached to
// the PDF (Order-X, UBL, Factur-X, ZUGFeRD, XRechnung; see pkg/embedded)
// does for a template.
type EmbeddedMode string

// Embedded modes. The zero value is EmbeddedUse.
const (
	// EmbeddedUse (default, also written "use"): a recognised attachment is
	// read instead of the printed text and keywords are skipped; the
	// docintake block still applies.
	EmbeddedUse EmbeddedMode = ""
	// EmbeddedIgnore: attachments are not looked at; the text is read.
	EmbeddedIgnore EmbeddedMode = "ignore"
	// EmbeddedRequire: only attachments are read. A PDF without a
	// structured order is rejected unknown_format, and keyword selection
	// never picks the template (deploy/templates/embedded.yml).
	EmbeddedRequire EmbeddedMode = "require"
)

func (p *parser) embeddedMode(n *yaml.Node, path string) EmbeddedMode {
	s, _ := p.str(n, path)
	switch s {
	case "use", "":
		return EmbeddedUse
	case string(EmbeddedIgnore), string(EmbeddedRequire):
		return EmbeddedMode(s)
	}
	p.problem(n, path, "unknown embedded mode %q (use, ignore, require)", s)
	return EmbeddedUse
}

// Structured is a business document read from a PDF attachment, as the
// template engine needs it. pkg/embedded produces it.
type Structured struct {
	// Source names it for events and the debug view:
	// "embedded Order-X COMFORT (order-x.xml)".
	Source string
	// Type is the attached document's type: order, order_change,
	// order_response, or invoice (credit notes included).
	Type order.DocumentType
	// Order is the mapped document; nil for invoices, which are only
	// recognised.
	Order *order.Order
	// Text is what docintake rules without a field match against (the
	// attachment's XML).
	Text string
}

// ReadsEmbedded reports whether the template opts select looks at
// attachments: false only for a template with docintake.embedded: ignore.
// Without a named template (keyword selection) attachments are read; an
// unknown template name counts as true and Run reports it.
func (s *Set) ReadsEmbedded(opts RunOptions) bool {
	t, err := s.chosen(opts)
	return err != nil || t == nil || t.DocIntake.Embedded != EmbeddedIgnore
}

// builtinEmbedded stands in for a template named "embedded" when keyword
// selection meets a structured document and the set has none: an order
// template with no rules, requirements or mappings.
var builtinEmbedded = &Template{Name: "embedded (built in)", Priority: DefaultPriority,
	Options:   Options{Currency: "EUR", DecimalSeparator: "."},
	DocIntake: DocIntake{DocumentType: order.TypeOrder, Embedded: EmbeddedRequire}}

// RunStructured is Run for a document that carries its own data. The
// template is the one opts name, else the set's template named "embedded",
// else a built-in order template (keywords are not matched: the attachment
// identifies itself). The document's type decides first, with certainty:
// an invoice or credit note given to an order template is rejected
// not_an_order (not_an_order_response for order response templates), an
// order message given to an invoice template not_an_invoice, an order
// response given to an order template not_an_order; order templates accept
// orders and order changes. Then the order passes through the same
// docintake block as a text-derived one (Template.Order: rules, required
// fields, mappings with deferral, result_mode and every check made there).
//
// It returns nil and no error when the attachment does not apply and the
// text is to be read instead: the template has docintake.embedded: ignore,
// or an invoice template meets an attached invoice (invoices are recognised,
// not mapped). Errors are Run's.
func (s *Set) RunStructured(ctx context.Context, doc *Structured, opts RunOptions) (*Run, error) {
	t, err := s.chosen(opts)
	if err != nil {
		return nil, err
	}
	if t == nil {
		var ok bool
		if t, ok = s.ByName("embedded"); !ok {
			t = builtinEmbedded
		}
	}
	if t.DocIntake.Embedded == EmbeddedIgnore {
		return nil, nil
	}
	want := t.DocIntake.DocumentType
	if want == order.TypeInvoice && doc.Type == order.TypeInvoice {
		return nil, nil
	}
	run := &Run{Template: t}
	if opts.Debug {
		run.Trace = &Trace{Template: t.Name, Templates: []TemplateTrace{{Name: t.Name, File: t.File, Priority: t.Priority, Matched: true}}}
		run.Trace.Checks = append(run.Trace.Checks, "source: "+doc.Source+" (keywords skipped)")
	}
	accepts := doc.Type == want || (want == order.TypeOrder && doc.Type == order.TypeOrderChange)
	if !accepts || doc.Order == nil {
		run.Outcome = &Outcome{Status: OutcomeRejected, Reason: rejectReason(want),
			Detail: fmt.Sprintf("the PDF carries a structured %s (%s), not a %s", strings.ReplaceAll(string(doc.Type), "_", " "), doc.Source, strings.ReplaceAll(string(want), "_", " "))}
		if run.Trace != nil {
			run.Trace.Checks = append(run.Trace.Checks, "outcome: "+run.Outcome.String())
		}
		return run, nil
	}
	src := doc.Order
	res := &Result{Template: t.Name, Fields: fieldsOf(src, run.Trace), OK: true, Matched: true, text: doc.Text}
	if src.Currency != "" {
		res.printedCurrency = src.Currency // the attachment states it
	}
	run.Result = res
	// The attachment's numbers are typed canonical decimals: Order reads
	// them without the template's printed separator.
	o, out, err := t.Order(ctx, res, opts.Mapper, opts.Mode, run.Trace)
	if o != nil {
		// What the canonical field names cannot carry without loss comes
		// from the attachment itself (mappings never write these).
		o.Type = src.Type
		o.Remarks = src.Remarks
		for i := range o.Parties {
			if p, ok := src.Party(o.Parties[i].Role); ok {
				o.Parties[i].OtherIDs = p.OtherIDs
			}
		}
		if len(o.Items) == len(src.Items) {
			for i := range o.Items {
				o.Items[i].Remarks = src.Items[i].Remarks
			}
		}
	}
	run.Order, run.Outcome = o, out
	return run, err
}

// fieldsOf renders a mapped order in the canonical field names of
// docs/templates.md, so that Template.Order builds it exactly as it builds
// a text-derived one. Decimals travel as Float{Dec} and dates as
// order.Date: nothing is re-parsed with the template's number or date
// options. tr, when set, gets every value for the debug view.
func fieldsOf(o *order.Order, tr *Trace) *Object {
	f := NewObject()
	set := func(k string, v any) {
		if setValue(f, k, v) && tr != nil {
			tr.Fields = append(tr.Fields, FieldTrace{Name: k, Parser: "embedded", Value: v})
		}
	}
	dec := func(s string) Float {
		// F too: a zero F reads as "not printed" (invoice2data's falsy 0.0).
		f, _ := strconv.ParseFloat(s, 64)
		return Float{F: f, Dec: s}
	}
	set("order_id", o.ID)
	set("date", o.IssueDate)
	set("delivery_date", o.DeliveryDate)
	set("currency", o.Currency)
	set("language", o.Language)
	set("buyer_order_id", o.BuyerOrderID)
	set("payment_terms", o.PaymentTerms)
	if len(o.Remarks) > 0 {
		rs := make([]any, len(o.Remarks))
		for i, r := range o.Remarks {
			rs[i] = r
		}
		set("remarks", rs)
	}
	for _, prefix := range []string{"buyer", "supplier", "delivery", "invoice"} {
		p, ok := o.Party(roleOfPrefix[prefix])
		if !ok {
			continue
		}
		a := p.Address
		for _, kv := range [][2]string{{"id", p.ID}, {"id_type", p.IDType}, {"vat_id", p.VATID}, {"name", a.Name},
			{"name2", a.Name2}, {"contact", a.Contact}, {"street", a.Street}, {"zip", a.Zip}, {"city", a.City},
			{"state", a.State}, {"country", a.Country}, {"country_code", a.CountryCoded}, {"phone", a.Phone},
			{"email", a.Email}, {"address", strings.Join(a.Lines, "\n")}} {
			set(prefix+"_"+kv[0], kv[1])
		}
	}
	set("total_net", dec(o.Totals.NetAmount))
	set("total_tax", dec(o.Totals.TaxAmount))
	set("total_gross", dec(o.Totals.GrossAmount))
	set("total_lines", dec(o.Totals.LinesAmount))
	set("total_charges", dec(o.Totals.Charges))
	set("total_allowances", dec(o.Totals.Allowances))
	set("total_extra_charges", dec(o.Totals.ExtraCharges))
	set("total_quantity", dec(o.Totals.Quantity))
	if len(o.Items) > 0 {
		rows := make([]any, 0, len(o.Items))
		for _, it := range o.Items {
			r := NewObject()
			put := func(k string, v any) { setValue(r, k, v) }
			put("position", it.Position)
			put("supplier_article_id", it.SupplierArticleID)
			put("buyer_article_id", it.BuyerArticleID)
			put("ean", it.EAN)
			put("description", it.Description)
			put("long_description", it.LongDescription)
			put("quantity", dec(it.Quantity))
			put("unit", it.Unit)
			put("unit_price", dec(it.UnitPrice))
			put("price_basis_quantity", dec(it.PriceBasisQuantity))
			put("line_amount", dec(it.LineAmount))
			put("tax_rate", dec(it.TaxRate))
			put("discount_percent", dec(it.DiscountPercent))
			put("discount_amount", dec(it.DiscountAmount))
			put("line_delivery_date", it.DeliveryDate)
			put("remark", strings.Join(it.Remarks, "\n"))
			rows = append(rows, r)
		}
		set("lines", rows)
	}
	return f
}

// setValue sets k to v unless v is an empty string, decimal or date (an
// extraction that found nothing leaves the field out, and so does fieldsOf);
// it reports whether it set k.
func setValue(o *Object, k string, v any) bool {
	switch x := v.(type) {
	case string:
		if x == "" {
			return false
		}
	case Float:
		if x.Dec == "" {
			return false
		}
	case order.Date:
		if x.IsZero() {
			return false
		}
	}
	o.Set(k, v)
	return true
}
