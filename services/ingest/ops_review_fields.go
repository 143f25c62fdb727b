package ingest

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/resultjson"
)

// The review page's form: the header fields, the parties and the item
// table of a result JSON order, each an input named after its place in
// the order, and back. What the form does not show (an item's EAN, long
// description and remarks, a party's other ids) is kept from the order as
// read, row by row.

// reviewField is one input of the review page.
type reviewField struct {
	Name    string // form name: order_id, totals.net_amount, p0.city, i2.quantity
	Label   string
	Value   string
	Kind    valueKind
	Role    string // what the page's arithmetic reads it as ("" none)
	Box     *box   // where it was read, when found on the page images
	Problem string // what failed at this field (an error: red)
	Warning string // what the order's checks found at it (a flag: yellow)
}

// ID is the input's element id.
func (f reviewField) ID() string {
	return "f-" + strings.NewReplacer(".", "-", "[", "-", "]", "").Replace(f.Name)
}

// Numeric tells the page to align the input as a number.
func (f reviewField) Numeric() bool { return f.Kind == kindDecimal }

// Placeholder shows the expected format of dates and numbers.
func (f reviewField) Placeholder() string {
	switch f.Kind {
	case kindDate:
		return "YYYY-MM-DD"
	case kindDecimal:
		return "0.00"
	}
	return ""
}

// orderField is a header value of the order with its input.
type orderField struct {
	name, label string
	kind        valueKind
	role        string
	at          func(o *resultjson.Order) *string
}

var headerFields = []orderField{
	{"order_id", "order number", kindText, "", func(o *resultjson.Order) *string { return &o.OrderID }},
	{"order_date", "order date", kindDate, "", func(o *resultjson.Order) *string { return &o.OrderDate }},
	{"delivery_date", "delivery date", kindDate, "", func(o *resultjson.Order) *string { return &o.DeliveryDate }},
	{"currency", "currency", kindText, "currency", func(o *resultjson.Order) *string { return &o.Currency }},
	{"buyer_order_id", "buyer's order number", kindText, "", func(o *resultjson.Order) *string { return &o.BuyerOrderID }},
	{"payment_terms", "payment terms", kindText, "", func(o *resultjson.Order) *string { return &o.PaymentTerms }},
}

var totalFields = []orderField{
	{"totals.net_amount", "net total", kindDecimal, "net", func(o *resultjson.Order) *string { return &o.Totals.NetAmount }},
	{"totals.tax_amount", "tax total", kindDecimal, "tax", func(o *resultjson.Order) *string { return &o.Totals.TaxAmount }},
	{"totals.gross_amount", "gross total", kindDecimal, "gross", func(o *resultjson.Order) *string { return &o.Totals.GrossAmount }},
}

// partyField is a value of a party with its input.
type partyField struct {
	key, label string
	at         func(p *resultjson.Party) *string
}

var partyFields = []partyField{
	{"name", "name", func(p *resultjson.Party) *string { return &p.Address.Name }},
	{"street", "street", func(p *resultjson.Party) *string { return &p.Address.Street }},
	{"zip", "postcode", func(p *resultjson.Party) *string { return &p.Address.Zip }},
	{"city", "city", func(p *resultjson.Party) *string { return &p.Address.City }},
	{"country", "country", func(p *resultjson.Party) *string { return &p.Address.Country }},
	{"id", "party id", func(p *resultjson.Party) *string { return &p.ID }},
	{"vat_id", "VAT id", func(p *resultjson.Party) *string { return &p.VATID }},
}

// itemColumn is a column of the item table.
type itemColumn struct {
	key, label string
	kind       valueKind
	role       string
	at         func(it *resultjson.Item) *string
}

var itemColumns = []itemColumn{
	{"position", "pos", kindText, "", func(it *resultjson.Item) *string { return &it.Position }},
	{"supplier_article_id", "supplier article", kindText, "", func(it *resultjson.Item) *string { return &it.SupplierArticleID }},
	{"buyer_article_id", "buyer article", kindText, "", func(it *resultjson.Item) *string { return &it.BuyerArticleID }},
	{"description", "description", kindText, "", func(it *resultjson.Item) *string { return &it.Description }},
	{"quantity", "qty", kindDecimal, "quantity", func(it *resultjson.Item) *string { return &it.Quantity }},
	{"unit", "unit", kindText, "", func(it *resultjson.Item) *string { return &it.Unit }},
	{"unit_price", "unit price", kindDecimal, "price", func(it *resultjson.Item) *string { return &it.UnitPrice }},
	{"price_basis_quantity", "per", kindDecimal, "basis", func(it *resultjson.Item) *string { return &it.PriceBasisQuantity }},
	{"line_amount", "line amount", kindDecimal, "amount", func(it *resultjson.Item) *string { return &it.LineAmount }},
}

// Bounds of a posted form: a person edits tens of items, not thousands.
const (
	maxReviewItems   = 2000
	maxReviewParties = 20
)

// formErrors are the problems of a posted form by field name.
type formErrors map[string]string

// orderFromForm applies the posted form to a copy of read (the order as
// read) and returns the corrected order. An item row left empty or marked
// deleted is dropped; an added party with no value is dropped. A value
// that is not a date or decimal where one is wanted is a form error.
func orderFromForm(form url.Values, read resultjson.Order) (resultjson.Order, formErrors) {
	o := read
	errs := formErrors{}
	set := func(name string, kind valueKind, dst *string) {
		v, msg := normalValue(form.Get(name), kind)
		if msg != "" {
			errs[name] = msg
		}
		*dst = v
	}
	for _, f := range append(append([]orderField{}, headerFields...), totalFields...) {
		if _, ok := form[f.name]; ok {
			set(f.name, f.kind, f.at(&o))
		}
	}
	o.Parties = partiesFromForm(form, read.Parties, set)
	o.Items = itemsFromForm(form, read.Items, set)
	return o, errs
}

func partiesFromForm(form url.Values, read []resultjson.Party, set func(string, valueKind, *string)) []resultjson.Party {
	n := min(formCount(form, "parties"), maxReviewParties)
	out := make([]resultjson.Party, 0, max(n, len(read)))
	for k := range max(n, len(read)) {
		var p resultjson.Party
		if k < len(read) {
			p = read[k]
		} else {
			p.Role = strings.TrimSpace(form.Get(fmt.Sprintf("p%d.role", k)))
		}
		blank := true
		for _, f := range partyFields {
			name := fmt.Sprintf("p%d.%s", k, f.key)
			if _, ok := form[name]; ok && k < n {
				set(name, kindText, f.at(&p))
			}
			blank = blank && *f.at(&p) == ""
		}
		if k >= len(read) && (blank || p.Role == "") {
			continue
		}
		out = append(out, p)
	}
	return out
}

func itemsFromForm(form url.Values, read []resultjson.Item, set func(string, valueKind, *string)) []resultjson.Item {
	n := min(formCount(form, "items"), maxReviewItems)
	out := make([]resultjson.Item, 0, n)
	for k := range n {
		var it resultjson.Item
		if k < len(read) {
			it = read[k]
		}
		if form.Get(fmt.Sprintf("i%d.del", k)) != "" {
			continue
		}
		blank := true
		for _, c := range itemColumns {
			set(fmt.Sprintf("i%d.%s", k, c.key), c.kind, c.at(&it))
			blank = blank && *c.at(&it) == ""
		}
		if blank {
			continue
		}
		out = append(out, it)
	}
	return out
}

// formCount reads a row count of the form (0 when absent or not a count).
func formCount(form url.Values, name string) int {
	n, err := strconv.Atoi(form.Get(name))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// normalValue is v as the result JSON holds a value of kind, or v and
// what is wrong with it: decimals in the xsd:decimal lexical space (no
// grouping: "0035" is "35"), dates as YYYY-MM-DD.
func normalValue(v string, kind valueKind) (string, string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", ""
	}
	switch kind {
	case kindDecimal:
		c, ok := order.CanonicalDecimal(v)
		if !ok {
			return v, "not a number: write it without grouping, with a dot (1234.50)"
		}
		return c, ""
	case kindDate:
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return v, "not a date: write YYYY-MM-DD"
		}
	}
	return v, ""
}
