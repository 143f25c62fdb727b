package generic

import (
	"context"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// reader is one reading in progress.
type reader struct {
	ctx   context.Context
	d     *doc
	cv    conv
	opts  Options
	res   *Result
	order *order.Order
	// noPriceRows is set for a table whose price column is empty on every
	// line (a form printed with a price column the buyer leaves blank).
	noPriceRows bool
	// hdr is the item table's header (nil when there is none): its
	// lines are column labels, not header fields.
	hdr *header
	// orderTitled is set when the document is titled as an order.
	orderTitled bool
	// priced is set when the lines print prices but no amounts: only a
	// printed total proves them.
	priced bool
	// text is the document's lines joined, for the whole-document
	// patterns (addresses, language).
	text string
	// qtyTotalPrinted is set when the document prints a total quantity
	// (closeTotals checks it against the rows).
	qtyTotalPrinted bool
}

// consider records a candidate for the debug output.
func (r *reader) consider(field, value string, at Position, kept bool, why string) {
	if r.opts.Debug {
		r.res.Candidates = append(r.res.Candidates, Candidate{Field: field, Value: value, At: at, Kept: kept, Why: why})
	}
}

// keep records a value the order carries, with its position.
func (r *reader) keep(name, value string, at Position) {
	r.res.Fields = append(r.res.Fields, Field{Name: name, Value: value, At: at})
}

// rejection is a reading that does not prove itself.
type rejection struct {
	reason document.Reason
	detail string
}

func (e *rejection) Error() string { return e.detail }

func reject(reason document.Reason, format string, args ...any) error {
	return &rejection{reason: reason, detail: fmt.Sprintf(format, args...)}
}

func read(ctx context.Context, text string, opts Options) (*Result, error) {
	r := &reader{ctx: ctx, d: parse(text), opts: opts, res: &Result{}}
	r.cv = detectConv(r.d)
	r.order = &order.Order{Type: order.TypeOrder}
	r.res.Order = r.order
	err := r.readAll()
	if err == nil {
		r.res.Outcome = &template.Outcome{Status: template.OutcomeSuccess, Detail: "read without a template (generic)"}
		return r.res, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	rj, ok := err.(*rejection)
	if !ok {
		return nil, err
	}
	r.res.Outcome = &template.Outcome{Status: template.OutcomeRejected, Reason: rj.reason, Detail: "generic reader: " + rj.detail}
	return r.res, nil
}

// readAll reads the header, the items and the totals and proves them;
// the first thing that does not prove itself is the rejection.
func (r *reader) readAll() error {
	r.text = joinLines(r.d)
	if strings.TrimSpace(r.text) == "" {
		return reject(document.ReasonUnknownFormat, "the document has no text to read")
	}
	r.hdr = r.findHeader(0, 0)
	if r.cv.unproven {
		return reject(document.ReasonUnknownFormat, "no number shows whether \".\" or \",\" is the decimal separator")
	}
	isOrder, other, titleIDs := r.docTitle()
	r.orderTitled = isOrder
	if other != "" {
		return reject(document.ReasonNotAnOrder, "the document is titled %q, not an order", other)
	}
	if !isOrder && len(r.labelled("invoice_id", invoiceLabels, typeID)) > 0 && len(r.labelled("order_id", orderIDLabels, typeID)) == 0 {
		return reject(document.ReasonNotAnOrder, "the document prints an invoice number and no order number")
	}
	r.readParties()
	if err := r.readID(titleIDs); err != nil {
		return err
	}
	if err := r.readCurrency(); err != nil {
		return err
	}
	if err := r.readDates(); err != nil {
		return err
	}
	return r.readItems()
}

func joinLines(d *doc) string {
	var b strings.Builder
	for _, l := range d.lines {
		b.WriteString(l.raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// readID proves the order number: exactly one distinct value among the
// labelled and title candidates.
func (r *reader) readID(title []cand) error {
	cs := append(r.labelled("order_id", orderIDLabels, typeID), title...)
	cs = distinct(append(cs, r.labelled("order_id", orderIDDateLabels, typeID)...))
	if len(cs) == 0 && r.orderTitled {
		cs = distinct(r.labelled("order_id", orderIDLabels2, typeID))
	}
	switch len(cs) {
	case 0:
		return reject(document.ReasonDocumentIDMissing, "no order number found (no order-number label with a value, no number in the title)")
	case 1:
		r.order.ID = cs[0].value
		r.keep("order_id", cs[0].value, cs[0].at)
		return nil
	}
	vals := make([]string, len(cs))
	for i, c := range cs {
		vals[i] = fmt.Sprintf("%s (page %d line %d, %s)", c.value, c.at.Page, c.at.Line+1, c.at.Label)
	}
	return reject(document.ReasonDocumentIDMissing, "more than one order number: %s", strings.Join(vals, ", "))
}

// readCurrency finds the currency: a currency label's code, else the one
// ISO code printed, else the one currency symbol printed. Two currencies
// are a rejection; none leaves the currency empty (not printed).
func (r *reader) readCurrency() error {
	codes, syms := r.printedCurrencies()
	if cs := distinct(r.labelled("currency", currencyLabels, typeCurrency)); len(cs) == 1 {
		delete(codes, cs[0].value)
		if len(codes) > 0 {
			return reject(document.ReasonUnknownFormat, "the currency is %s, but %s is printed too", cs[0].value, strings.Join(keys(codes), ", "))
		}
		r.order.Currency = cs[0].value
		r.keep("currency", cs[0].value, cs[0].at)
		return nil
	}
	pick := codes
	if len(codes) == 0 {
		pick = syms
	}
	if len(pick) > 1 {
		return reject(document.ReasonUnknownFormat, "more than one currency printed: %s", strings.Join(keys(pick), ", "))
	}
	for code, at := range pick {
		if code == "USD" && len(codes) == 0 {
			// A bare "$": the addresses tell US from Canadian dollars.
			var err error
			if code, err = r.dollar(); err != nil {
				return err
			}
		}
		r.order.Currency = code
		r.keep("currency", code, at)
	}
	return nil
}

var (
	// otherCountry is an address or tax id of a country that writes dates
	// day first: with one of them on the document a US address proves
	// nothing about its dates.
	otherCountry = regexp.MustCompile(`\b(?:India|GSTIN|Deutschland|Germany|France|España|Spain|Italia|Italy|Nederland|Netherlands|United Kingdom|England|Canada|Mexico|México|Australia)\b`)
	usAddress    = regexp.MustCompile(`\b(?:USA|U\.S\.A\.|United States)\b|\b[A-Z]{2},? \d{5}(?:-\d{4})?\b`)
	caAddress    = regexp.MustCompile(`\bCanada\b|\b[A-Z]{2},? [A-Z]\d[A-Z] ?\d[A-Z]\d\b`)
)

// dollar decides what a bare "$" is: US dollars unless only Canadian
// addresses are printed; both kinds of address leave it unproven.
func (r *reader) dollar() (string, error) {
	us, ca := usAddress.MatchString(r.text), caAddress.MatchString(r.text)
	switch {
	case ca && us:
		return "", reject(document.ReasonUnknownFormat, "amounts print only \"$\" and the document has US and Canadian addresses")
	case ca:
		return "CAD", nil
	}
	return "USD", nil
}

// printedCurrencies are the ISO codes printed as words and the currencies
// of symbols glued to amounts.
func (r *reader) printedCurrencies() (codes, syms map[string]Position) {
	codes, syms = map[string]Position{}, map[string]Position{}
	for _, l := range r.d.lines {
		for _, c := range l.cells {
			for _, w := range c.words {
				t := strings.Trim(w.text, "()[]:,")
				if isoCodes[t] {
					codes[t] = l.at(w.col, w.end, "")
				} else if core, cur, _ := splitAmount(w.text); cur != "" && (core == "" || numberCore.MatchString(core)) {
					syms[cur] = l.at(w.col, w.end, "") // "$2,760.00", or "$" before "2,760.00"
				}
			}
		}
	}
	return codes, syms
}

func typeCurrency(text string, _ bool) string {
	f := strings.Fields(text)
	if len(f) == 0 {
		return ""
	}
	t := strings.ToUpper(strings.Trim(f[0], "()[]:,"))
	if isoCodes[t] {
		return t
	}
	if _, cur, _ := splitAmount(f[0] + "1"); cur != "" {
		return cur
	}
	return ""
}

func keys(m map[string]Position) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// readDates proves the order date (one distinct date among the order-date
// labels, else among bare "Date" labels) and reads a header delivery date
// when exactly one is printed.
func (r *reader) readDates() error {
	o, why := detectDateOrder(r.d, r.order.Currency, usAddress.MatchString(r.text) && !otherCountry.MatchString(r.text), continentalLanguage(r.text))
	ambiguous := false
	typ := func(text string, _ bool) string {
		if !startsWithDate(text) {
			return "" // "Fecha de impresión 22/10/2023": another date's label
		}
		d, ok, amb := findDate(text, o)
		ambiguous = ambiguous || amb
		if !ok {
			return ""
		}
		return d.String()
	}
	afterSlash := func(text string, whole bool) string {
		if _, date, ok := strings.Cut(text, "/ "); ok {
			return typ(date, whole)
		}
		return ""
	}
	cs := distinct(append(r.labelled("order_date", orderDateLabels, typ), r.labelled("order_date", orderIDDateLabels, afterSlash)...))
	if len(cs) == 0 {
		cs = distinct(r.labelled("order_date", orderDateLabels2, typ))
	}
	switch {
	case len(cs) > 1:
		return reject(document.ReasonUnknownFormat, "more than one order date: %s and %s", cs[0].value, cs[1].value)
	case len(cs) == 0 && ambiguous:
		return reject(document.ReasonUnknownFormat, "the order date is ambiguous: %s", why)
	case len(cs) == 0:
		// A date under a label the reader does not know would be lost:
		// an order is delivered with its date or not at all.
		return reject(document.ReasonUnknownFormat, "no order date found (no order-date label with a date)")
	case len(cs) == 1:
		r.order.IssueDate = dateOf(cs[0].value)
		r.keep("order_date", cs[0].value, cs[0].at)
	}
	if recv := r.opts.ReceivedAt; !recv.IsZero() && before(order.DateOf(recv.AddDate(0, 0, 1)), r.order.IssueDate) {
		// An order is dated before it is sent: a later date is misread
		// (day and month taken the wrong way round) or not the order's.
		return reject(document.ReasonUnknownFormat, "the order date %s is after the day the document arrived (%s)",
			r.order.IssueDate, order.DateOf(recv))
	}
	if ds := distinct(r.labelled("delivery_date", deliveryLabels, typ)); len(ds) == 1 {
		d := dateOf(ds[0].value)
		if r.order.IssueDate.IsZero() || !before(d, r.order.IssueDate) {
			r.order.DeliveryDate = d
			r.keep("delivery_date", ds[0].value, ds[0].at)
		}
	}
	return nil
}

func dateOf(s string) order.Date {
	var d order.Date
	var m int
	fmt.Sscanf(s, "%d-%d-%d", &d.Year, &m, &d.Day)
	d.Month = monthOf(m)
	return d
}

func before(a, b order.Date) bool {
	return a.String() < b.String()
}

// readItems reads the item table and proves it: every line that prints
// its numbers closes, and the lines add up to the printed totals.
func (r *reader) readItems() error {
	h := r.hdr
	if h == nil {
		return reject(document.ReasonCannotParseItems, "no item table: no header line with a quantity column and two other columns")
	}
	rows, end, err := r.readRows(h)
	if err == nil && len(rows) == 0 && h.has(colPrice) && !h.has(colAmount) {
		r.noPriceRows = true // read again: every row may leave the price blank
		rows, end, err = r.readRows(h)
	}
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return reject(document.ReasonCannotParseItems, "the item table (header on page %d line %d) has no row with a quantity", r.d.lines[h.first].page, r.d.lines[h.first].no+1)
	}
	totals := r.readTotals(h.first, end)
	for _, t := range totals {
		r.qtyTotalPrinted = r.qtyTotalPrinted || t.kind == "quantity"
	}
	lines, err := r.proveRows(h, rows)
	if err != nil {
		return err
	}
	if at := r.strayRow(h, end); at != "" {
		return reject(document.ReasonCannotParseItems, "a line that reads as an item follows the end of the table (%s)", at)
	}
	if err := closeTotals(r.order, lines, r.priced, totals); err != nil {
		return reject(document.ReasonCannotParseItems, "%v", err)
	}
	if r.order.Totals.NetAmount == "" && r.order.Totals.GrossAmount == "" {
		if l := r.unreadTotal(h.last+1, rows); l != "" {
			return reject(document.ReasonCannotParseItems, "a total is printed (%q) that the reader cannot place", l)
		}
	}
	r.keepTotals(totals)
	return nil
}

// proveRows checks every row and returns the sum of the line amounts (nil
// when the lines print none).
func (r *reader) proveRows(h *header, rows []*row) (*big.Rat, error) {
	sum, amounts, prices := new(big.Rat), 0, 0
	for n, rw := range rows {
		if lack := r.complete(h, rw); lack != "" {
			return nil, reject(document.ReasonCannotParseItems, "line %d %s", n+1, lack)
		}
		if err := checkRow(rw); err != nil {
			return nil, reject(document.ReasonCannotParseItems, "line %d: %v", n+1, err)
		}
		rw.item.Description = strings.Join(nonEmpty(rw.desc), " ")
		r.order.Items = append(r.order.Items, rw.item)
		for _, f := range itemFields {
			if at, ok := rw.at[f]; ok {
				r.keep(fmt.Sprintf("items[%d].%s", n, f), fieldValue(rw.item, f), at)
			}
		}
		if a := order.Rat(rw.item.LineAmount); a != nil {
			sum.Add(sum, a)
			amounts++
		}
		if rw.prices {
			prices++
		}
	}
	switch {
	case amounts == len(rows):
		return sum, nil
	case amounts > 0:
		return nil, reject(document.ReasonCannotParseItems, "%d of %d lines print a line amount", amounts, len(rows))
	case prices > 0 && prices < len(rows):
		return nil, reject(document.ReasonCannotParseItems, "%d of %d lines print a price", prices, len(rows))
	case prices > 0:
		r.priced = true
		return priceSum(rows), nil
	}
	return nil, r.unambiguousWithoutPrices(h, rows)
}

// unambiguousWithoutPrices holds a table that prints no prices to what
// proves it instead of arithmetic: a description or article column, every
// row with its position or article, and quantities that read the same
// whatever the decimal separator ("2.000" is two or two thousand).
func (r *reader) unambiguousWithoutPrices(h *header, rows []*row) error {
	if !h.has(colDesc) && !h.has(colArticle) {
		return reject(document.ReasonCannotParseItems, "a table without prices needs a description or article column to be unambiguous")
	}
	if r.d.pages > 1 && !r.qtyTotalPrinted {
		// Rows lost at a page break would go unnoticed: only a printed
		// total quantity proves a table without prices over pages.
		return reject(document.ReasonCannotParseItems, "a table without prices on a document of %d pages needs a printed total quantity to prove no line is lost", r.d.pages)
	}
	for n, rw := range rows {
		if rw.item.Position == "" && rw.item.BuyerArticleID == "" {
			return reject(document.ReasonCannotParseItems, "line %d of a table without prices has no position or article to prove it is an item", n+1)
		}
		if q := rw.qtyText; threeDecimals.MatchString(q) || strings.Count(q, ".")+strings.Count(q, ",") > 1 {
			return reject(document.ReasonCannotParseItems, "line %d of a table without prices prints the quantity %q, which reads differently with a decimal point or comma", n+1, q)
		}
	}
	return nil
}

// priceSum is Σ quantity × price ÷ basis, rounded to cents per line, for
// tables that print prices but no line amounts.
func priceSum(rows []*row) *big.Rat {
	s := new(big.Rat)
	for _, rw := range rows {
		v := lineValue(order.Rat(rw.item.Quantity), order.Rat(rw.item.UnitPrice), order.Rat(rw.item.PriceBasisQuantity), order.Rat(rw.item.DiscountPercent))
		c, _ := new(big.Rat).SetString(v.FloatString(2))
		s.Add(s, c)
	}
	return s
}

// itemFields are the item values the reader keeps with their positions,
// in the order Result.Fields lists them.
var itemFields = []string{"quantity", "unit_price", "line_amount", "discount_percent"}

func fieldValue(it order.Item, f string) string {
	switch f {
	case "quantity":
		return it.Quantity
	case "unit_price":
		return it.UnitPrice
	case "line_amount":
		return it.LineAmount
	case "discount_percent":
		return it.DiscountPercent
	}
	return ""
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// strayRow looks past the table's end for a line that reads as an item
// (a quantity and a price or amount under the header's columns): the table
// ended too early, and what was read is not the whole order.
func (r *reader) strayRow(h *header, end int) string {
	for i := end; i < len(r.d.lines); i++ {
		l := r.d.lines[i]
		if l.empty() || r.totalsLine(h, l) {
			continue
		}
		if _, ok := r.totalOf(l); ok {
			continue
		}
		rw := r.rowOf(h, l, i, r.cellsByColumn(h, l), false)
		if rw != nil && rw.item.UnitPrice != "" && rw.item.LineAmount != "" && rw.unplaced == "" || r.looksLikeRow(l) {
			return fmt.Sprintf("page %d line %d", l.page, l.no+1)
		}
	}
	return ""
}

// looksLikeRow reports whether a line has the shape of an item whatever
// its columns: four cells or more, two of the last three of them numbers
// (a table going on on a page without its header).
func (r *reader) looksLikeRow(l *line) bool {
	n := len(l.cells)
	if n < 4 {
		return false
	}
	nums := 0
	for _, c := range l.cells[n-3:] {
		if _, ok := r.cv.amount(c.text); ok {
			nums++
		}
	}
	return nums >= 2
}

// totalWord finds the words of a total in the six languages' forms.
var totalWord = regexp.MustCompile(`(?i)total|summe|gesamt|betrag|totaal|importe|montant|bedrag|\bnet\b|netto|payer|payable|pagar|pagare`)

// unreadTotal returns a line after the table that prints a total-like
// word and a number, when no total was read: the document has a total the
// reader could not place, so its lines are unproven.
func (r *reader) unreadTotal(from int, rows []*row) string {
	items := map[int]bool{}
	for _, rw := range rows {
		items[rw.first] = true
	}
	amountEnd := -1
	if k := r.hdr.index(colAmount); k >= 0 {
		amountEnd = r.hdr.cols[k].end
	}
	for i := from; i < len(r.d.lines); i++ {
		l := r.d.lines[i]
		if items[i] {
			continue
		}
		if !totalWord.MatchString(l.raw) && !r.underAmounts(l, amountEnd) {
			continue
		}
		for _, c := range l.cells {
			for _, w := range c.words {
				if _, ok := r.cv.amount(w.text); ok && digits(w.text) > 0 {
					return strings.TrimSpace(l.raw)
				}
			}
		}
	}
	return ""
}

// underAmounts reports whether a line that is not an item ends with a
// number under the amount column, after some text: a total in words the
// reader does not know ("Orderwaarde excl. BTW   4043,60").
func (r *reader) underAmounts(l *line, amountEnd int) bool {
	n := len(l.cells)
	if amountEnd < 0 || n < 2 {
		return false
	}
	last := l.cells[n-1]
	_, ok := r.cv.amount(last.text)
	return ok && last.end >= amountEnd-4 && last.end <= amountEnd+8 && digits(l.cells[n-2].text) < len(l.cells[n-2].text)/2
}

// keepTotals records the totals the order carries with the place each
// was printed (a tax added up from several lines: the first of them).
func (r *reader) keepTotals(printed []total) {
	t := r.order.Totals
	for _, f := range []struct{ name, kind, value string }{
		{"net_total", "net", t.NetAmount}, {"tax_total", "tax", t.TaxAmount}, {"gross_total", "gross", t.GrossAmount},
	} {
		if f.value == "" {
			continue
		}
		var at Position // the lines' sum when no net total is printed
		for _, p := range printed {
			if p.kind == f.kind && (f.kind == "tax" || p.value == f.value) {
				at = p.at
				break
			}
		}
		r.keep(f.name, f.value, at)
	}
}
