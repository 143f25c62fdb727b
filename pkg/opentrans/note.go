package opentrans

import (
	"strconv"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/order"
)

// Notes keep what openTRANS has no valid place for: a unit or currency
// outside the schema's code lists, payment terms, a value longer than the
// schema allows, ... Each note is a REMARKS element "<label>: <value>" written
// before the document's own remarks, readable by a person in the ERP and
// turned back into the model field by Read. The labels never contain ": ".
//
// Read treats the leading REMARKS as notes only while their labels are known,
// appear in the order the writer emits them (each label at most once) and
// their values are consistent with the document (slot.apply); everything from
// the first other remark on is an ordinary remark. That keeps Read(Write(o))
// equal to o even when one of o's remarks happens to look like a note
// (FuzzWrite found the case of a remark "Full value of LINE_ITEM_ID: …").
const (
	noteCurrency        = "Printed currency (not in the openTRANS 2.1 currency list)"
	noteCurrencyDefault = "No currency printed, CURRENCY is the default"
	noteNoDate          = "No document date printed, the date written is the processing date"
	noteLanguage        = "Printed language (not in the BMEcat language list)"
	notePaymentTerms    = "Payment terms"
	noteNetAmount       = "Net amount"
	noteTaxAmount       = "Tax amount"
	noteLinesAmount     = "Total of the line amounts"
	noteCharges         = "Charges in the net amount"
	noteAllowances      = "Allowances in the net amount"
	noteExtraCharges    = "Charges after tax"
	noteTotalQuantity   = "Total quantity"
	noteBuyerOrderID    = "Buyer order number"
	noteUnit            = "Printed unit (not in the BMEcat 2005 unit list, ORDER_UNIT is C62)"
	noteDeliveryDate    = "Delivery date"
	noteTaxRate         = "Tax rate in percent"
	notePriceBasis      = "Price basis quantity"
	noteDiscountPercent = "Discount in percent"
	noteDiscountAmount  = "Discount amount of the line"
	noteFullValue       = "Full value of "
)

// maxRemark is the length limit of REMARKS (typeMLSTRING64000).
const maxRemark = 64000

// slot is one kind of note: its label and how Read puts the value back.
// apply refuses (returns false, changing nothing) a value the writer could
// not have produced from the document as read so far, e.g. "Full value of
// bmecat:NAME" whose value does not start with the NAME element's text: such
// a remark is the document's own, not a note.
type slot struct {
	label string
	apply func(v string) bool
}

// textField is a model string written to an element with a length limit; a
// longer value is truncated in the element and kept whole in a note.
type textField struct {
	elem string // element name, also the note's key
	max  int
	ptr  *string
}

// restore accepts a full-value note for f.
func (f textField) restore(v string) bool {
	t, cut := truncate(v, f.max)
	if !cut || strings.TrimSpace(t) != *f.ptr {
		return false
	}
	*f.ptr = v
	return true
}

// setIf returns an apply func that sets *p to v when ok(v) holds and *p is
// still empty (the note stands for a value the document has no element for).
func setIf(p *string, ok func(v string) bool) func(string) bool {
	return func(v string) bool {
		if *p != "" || !ok(v) {
			return false
		}
		*p = v
		return true
	}
}

func isDecimal(v string) bool { return checkDecimal(v) }

func always(string) bool { return true }

func partyFields(p *order.Party) []textField {
	a := &p.Address
	return []textField{
		{"bmecat:PARTY_ID", 250, &p.ID},
		{"bmecat:NAME", 50, &a.Name},
		{"bmecat:NAME2", 50, &a.Name2},
		{"bmecat:CONTACT_NAME", 50, &a.Contact},
		{"bmecat:STREET", 50, &a.Street},
		{"bmecat:ZIP", 20, &a.Zip},
		{"bmecat:CITY", 50, &a.City},
		{"bmecat:STATE", 50, &a.State},
		{"bmecat:COUNTRY", 50, &a.Country},
		{"bmecat:VAT_ID", 50, &p.VATID},
		{"bmecat:PHONE", 50, &a.Phone},
		{"bmecat:EMAIL", 255, &a.Email},
	}
}

func itemFields(it *order.Item) []textField {
	return []textField{
		{"LINE_ITEM_ID", 50, &it.Position},
		{"bmecat:SUPPLIER_PID", 32, &it.SupplierArticleID},
		{"bmecat:INTERNATIONAL_PID", 100, &it.EAN},
		{"bmecat:BUYER_PID", 50, &it.BuyerArticleID},
		{"bmecat:DESCRIPTION_SHORT", 150, &it.Description},
	}
}

// idFields are the header's id elements for a document type: the model field
// written to each (see Write for why order responses and invoices differ).
// split tells whether an order response carries both the buyer's and the
// supplier's order number.
func idFields(o *order.Order, split bool) []textField {
	switch o.Type {
	case order.TypeOrderResponse:
		if !split {
			return []textField{{"ORDER_ID", 250, &o.ID}}
		}
		return []textField{{"ORDER_ID", 250, &o.BuyerOrderID}, {"SUPPLIER_ORDER_ID", 250, &o.ID}}
	case order.TypeInvoice:
		return []textField{{"INVOICE_ID", 250, &o.ID}, {"ORDER_HISTORY/ORDER_ID", 250, &o.BuyerOrderID}}
	default:
		return []textField{{"ORDER_ID", 250, &o.ID}}
	}
}

// partyKey and lineKey name a note's slot ("NAME of PARTY 2"). They run for
// every field of every party of every document written: concatenation, not
// fmt.Sprintf, which was 3 % of BenchmarkDocumentCPU (services/processor).
func partyKey(i int, elem string) string { return elem + " of PARTY " + strconv.Itoa(i+1) }

func lineKey(elem string, j int) string { return elem + " " + strconv.Itoa(j+1) }

// headerSlots lists the header notes in the order the writer emits them.
// parties[i] are the model parties Read made from the i-th PARTY element.
func headerSlots(o *order.Order, split bool, parties [][]*order.Party, lines []int) []slot {
	s := []slot{
		{noteCurrency, func(v string) bool {
			if _, ok := currencyCode(v); ok || (o.Currency != "" && o.Type != order.TypeInvoice) {
				return false
			}
			o.Currency = v
			return true
		}},
		{noteCurrencyDefault, func(v string) bool {
			if o.Type != order.TypeInvoice || o.Currency != v {
				return false
			}
			o.Currency = ""
			return true
		}},
		{noteNoDate, func(v string) bool {
			if o.IssueDate.IsZero() || o.IssueDate.String() != v {
				return false
			}
			o.IssueDate = order.Date{}
			return true
		}},
		{noteLanguage, setIf(&o.Language, func(v string) bool { _, ok := languageCode(v); return !ok })},
		{notePaymentTerms, setIf(&o.PaymentTerms, always)},
		{noteNetAmount, setIf(&o.Totals.NetAmount, func(v string) bool { return o.Type != order.TypeInvoice && isDecimal(v) })},
		{noteTaxAmount, setIf(&o.Totals.TaxAmount, func(v string) bool { return o.Type != order.TypeInvoice && isDecimal(v) })},
		{noteLinesAmount, setIf(&o.Totals.LinesAmount, isDecimal)},
		{noteCharges, setIf(&o.Totals.Charges, isDecimal)},
		{noteAllowances, setIf(&o.Totals.Allowances, isDecimal)},
		{noteExtraCharges, setIf(&o.Totals.ExtraCharges, isDecimal)},
		{noteTotalQuantity, setIf(&o.Totals.Quantity, isDecimal)},
		{noteBuyerOrderID, setIf(&o.BuyerOrderID, func(string) bool { return o.Type == order.TypeOrder })},
	}
	for _, f := range idFields(o, split) {
		s = append(s, slot{noteFullValue + f.elem, f.restore})
	}
	for i, ps := range parties {
		// Notes about a PARTY apply to every model party made from it.
		all := func(apply func(p *order.Party, v string) bool) func(string) bool {
			return func(v string) bool {
				ok := len(ps) > 0
				for _, p := range ps {
					ok = ok && apply(p, v)
				}
				return ok
			}
		}
		s = append(s, slot{partyKey(i, "Printed country code (not in the BMEcat country list)"),
			all(func(p *order.Party, v string) bool {
				_, ok := countryCode(v)
				return setIf(&p.Address.CountryCoded, func(string) bool { return !ok })(v)
			})})
		for k, f := range partyFields(&order.Party{}) {
			s = append(s, slot{noteFullValue + partyKey(i, f.elem), all(func(p *order.Party, v string) bool {
				return partyFields(p)[k].restore(v)
			})})
		}
		for j := 0; j < lines[i]; j++ {
			s = append(s, slot{noteFullValue + partyKey(i, lineKey("bmecat:ADDRESS_REMARKS", j)),
				all(func(p *order.Party, v string) bool {
					return j < len(p.Address.Lines) && textField{"", 250, &p.Address.Lines[j]}.restore(v)
				})})
		}
	}
	return s
}

// itemSlots lists an item's notes in the order the writer emits them.
// perPrice is the discount amount per price unit the item's
// ALLOW_OR_CHARGES_FIX holds ("" when none; see allowance.go).
func itemSlots(it *order.Item, typ order.DocumentType, perPrice string) []slot {
	noPrice := func(v string) bool { return it.UnitPrice == "" && isDecimal(v) }
	s := []slot{
		{noteUnit, func(v string) bool {
			if _, known := UnitCode(v); known || it.Unit != DefaultUnit {
				return false
			}
			it.Unit = v
			return true
		}},
		{noteDeliveryDate, func(v string) bool {
			d := parseDate(v)
			if typ != order.TypeInvoice || !it.DeliveryDate.IsZero() || d.IsZero() || d.String() != v {
				return false
			}
			it.DeliveryDate = d
			return true
		}},
		{noteTaxRate, setIf(&it.TaxRate, noPrice)},
		{notePriceBasis, setIf(&it.PriceBasisQuantity, noPrice)},
		{noteDiscountPercent, setIf(&it.DiscountPercent, func(v string) bool { return noPrice(v) && !isZero(v) })},
		// The line's discount amount is a note whenever it is written; it
		// is the item's only when the allowance per price unit is the one
		// the writer makes of it (none when there is no price or no exact
		// amount per unit).
		{noteDiscountAmount, setIf(&it.DiscountAmount, func(v string) bool {
			if !isDecimal(v) || isZero(v) {
				return false
			}
			want := ""
			if it.UnitPrice != "" {
				want, _ = perPriceAmount(v, it.Quantity, it.PriceBasisQuantity)
			}
			return sameDecimal(want, perPrice)
		})},
	}
	for _, f := range itemFields(it) {
		s = append(s, slot{noteFullValue + f.elem, f.restore})
	}
	return s
}

// notes collects notes by label while writing; emit orders them by slots.
type notes map[string]string

func (n notes) add(label, value string) {
	if _, dup := n[label]; !dup {
		n[label] = value
	}
}

// ordered returns the note texts in slot order.
func (n notes) ordered(slots []slot) []string {
	if len(n) == 0 {
		return nil
	}
	out := make([]string, 0, len(n))
	for _, s := range slots {
		if v, ok := n[s.label]; ok {
			out = append(out, limit(s.label+": "+v, maxRemark))
		}
	}
	return out
}

// applyNotes restores the leading notes among remarks into the model through
// slots and returns the remaining remarks.
func applyNotes(remarks []string, slots []slot) []string {
	rank := make(map[string]int, len(slots))
	for i, s := range slots {
		rank[s.label] = i
	}
	last := -1
	for k, r := range remarks {
		label, value, ok := strings.Cut(r, ": ")
		i, known := rank[label]
		if !ok || !known || i <= last || value == "" || value != clean(value) || !slots[i].apply(value) {
			return remarks[k:]
		}
		last = i
	}
	return nil
}

// parseDate reads the date part of a dtDATETIME ("2024-05-13",
// "2024-05-13T10:15:00+02:00") as written, without converting zones. Values
// without a full date give the zero Date.
func parseDate(s string) order.Date {
	s = strings.TrimSpace(s)
	if len(s) < 10 {
		return order.Date{}
	}
	t, err := time.Parse(time.DateOnly, s[:10])
	if err != nil {
		return order.Date{}
	}
	return order.DateOf(t)
}
