package template_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// poTemplate reads poText: header dates printed day first, line delivery
// dates month first (the lines block's own date_formats), prices per a
// basis quantity printed on some lines only.
const poTemplate = `
issuer: Trust Buyer
keywords: [TRUST BUYER, PURCHASE ORDER]
fields:
  order_id: {parser: regex, regex: 'Order no\.?\s+(\S+)'}
  date: {parser: regex, regex: 'Date:\s+(\d\d/\d\d/\d{4})', type: date, date_formats: ['%d/%m/%Y']}
  currency: {parser: regex, regex: 'Currency:\s+([A-Z]{3})'}
  total_net: {parser: regex, regex: 'Net total\s+([\d,.]+)'}
  total_tax: {parser: regex, regex: 'VAT\s+([\d,.]+)'}
  total_gross: {parser: regex, regex: 'Total\s+([\d,.]+)\s*$'}
  lines:
    parser: lines
    start: Pos\s+Article
    end: Net total
    line: '^\s*(?P<position>\d+)\s+(?P<supplier_article_id>\S+)\s+(?P<description>.+?)\s{2,}(?P<quantity>[\d.,]*)\s{2,}(?P<unit_price>[\d.,]+)(?:\s*/\s*(?P<price_basis_quantity>\d+))?\s+(?P<line_amount>[\d.,]+)\s+(?P<line_delivery_date>\d\d/\d\d/\d{4})\s*$'
    types: {quantity: float, unit_price: float, price_basis_quantity: float, line_amount: float, line_delivery_date: date}
    date_formats: ['%m/%d/%Y']
options:
  decimal_separator: "."
docintake:
  name: trust
`

// poText prints 3 lines: 10 × 2.50 = 25.00; 1000 × 12.00 per 100 = 120.00;
// 4 × 1,234.50 = 4,938.00. Net 5,083.00 + VAT 965.77 = 6,048.77.
const poText = `TRUST BUYER                      PURCHASE ORDER
Order no. PO-4711
Date: 03/02/2026
Currency: EUR

Pos  Article   Description                 Qty       Price          Amount   Delivery
1    A-100     Hex bolts M8                10        2.50           25.00    02/14/2026
2    A-200     Washers                     1000      12.00 / 100    120.00   02/15/2026
3    A-300     Motor housing               4         1,234.50       4,938.00 03/01/2026
Net total   5,083.00
VAT   965.77
Total   6,048.77
`

func loadOne(t *testing.T, yml string) *template.Set {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.yml"), []byte(yml), 0o600))
	set, err := template.Load(dir)
	require.NoError(t, err)
	return set
}

func runPO(t *testing.T, set *template.Set, text string) (*template.Run, error) {
	t.Helper()
	return set.Run(t.Context(), text, template.RunOptions{Template: "trust", Debug: true})
}

func TestCorrectPOAccepted(t *testing.T) {
	t.Parallel()
	run, err := runPO(t, loadOne(t, poTemplate), poText)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	o := run.Order
	require.Equal(t, "PO-4711", o.ID)
	// Header date day first, line dates month first.
	require.Equal(t, order.Date{Year: 2026, Month: time.February, Day: 3}, o.IssueDate)
	require.Equal(t, order.Date{Year: 2026, Month: time.February, Day: 14}, o.Items[0].DeliveryDate)
	require.Equal(t, order.Date{Year: 2026, Month: time.March, Day: 1}, o.Items[2].DeliveryDate)
	require.Equal(t, "EUR", o.Currency)
	require.Len(t, o.Items, 3)
	// The price basis is printed on line 2 only: the others have none,
	// never a price per 0 units.
	require.Equal(t, "", o.Items[0].PriceBasisQuantity)
	require.Equal(t, "100", o.Items[1].PriceBasisQuantity)
	require.Equal(t, "1234.50", o.Items[2].UnitPrice)
	require.Equal(t, "4938.00", o.Items[2].LineAmount)
	require.Equal(t, order.Totals{NetAmount: "5083.00", TaxAmount: "965.77", GrossAmount: "6048.77"}, o.Totals)
	checks := strings.Join(run.Trace.Checks, "\n")
	require.Contains(t, checks, "check line_amount ok: line 2 (position 2, \"A-200\"): quantity 1000 × unit price 12.00 ÷ price basis 100 = 120")
	require.Contains(t, checks, "check net_total ok")
	require.Contains(t, checks, "check gross_total ok")
}

func TestPORejections(t *testing.T) {
	t.Parallel()
	set := loadOne(t, poTemplate)
	cases := []struct {
		name, old, new string
		detail         []string
	}{
		{"wrong line amount", "4         1,234.50       4,938.00", "4         1,234.50       4,838.00",
			[]string{"line_amount", "line 3 (position 3, \"A-300\")", "quantity 4 × unit price 1234.50 = 4938", "printed line amount 4838.00", "difference 100"}},
		{"wrong net total", "Net total   5,083.00", "Net total   5,093.00",
			[]string{"net_total", "sum of 3 line amounts = 5083", "printed net total 5093.00"}},
		{"wrong gross total", "Total   6,048.77", "Total   6,048.78",
			[]string{"gross_total", "net total 5083.00 + tax total 965.77 = 6048.77", "printed gross total 6048.78", "difference 0.01", "tolerance 0.005"}},
		{"empty quantity", "Hex bolts M8                10        2.50", "Hex bolts M8                          2.50",
			[]string{"line 1 (position 1, \"A-100\") has no quantity"}},
		{"zero quantity", "Hex bolts M8                10        2.50           25.00", "Hex bolts M8                0         2.50           0.00 ",
			[]string{"line 1 (position 1, \"A-100\") has quantity 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			text := strings.Replace(poText, c.old, c.new, 1)
			require.NotEqual(t, poText, text)
			run, err := runPO(t, set, text)
			require.NoError(t, err)
			require.Equal(t, template.OutcomeRejected, run.Outcome.Status, run.Outcome.String())
			require.Equal(t, document.ReasonCannotParseItems, run.Outcome.Reason)
			for _, d := range c.detail {
				require.Contains(t, run.Outcome.Detail, d)
			}
		})
	}
}

func TestPOChecksConfigurable(t *testing.T) {
	t.Parallel()
	wrong := strings.Replace(poText, "Total   6,048.77", "Total   6,048.78", 1)
	// A tolerance of one cent accepts it; switching the check off too.
	for _, cfg := range []string{"  checks: {tolerance: '0.01'}\n", "  checks: {gross_total: false}\n", "  checks: false\n"} {
		run, err := runPO(t, loadOne(t, poTemplate+cfg), wrong)
		require.NoError(t, err)
		require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, "%s: %s", cfg, run.Outcome)
	}
	// Zero quantities only when the template allows them.
	zero := strings.Replace(poText, "Hex bolts M8                10        2.50           25.00", "Hex bolts M8                0         2.50           0.00 ", 1)
	zero = strings.Replace(zero, "5,083.00", "5,058.00", 1)
	zero = strings.Replace(strings.Replace(zero, "965.77", "960.02", 1), "6,048.77", "6,018.02", 1)
	run, err := runPO(t, loadOne(t, poTemplate+"  allow_nonpositive_quantity: true\n"), zero)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
}

func TestPOValueErrors(t *testing.T) {
	t.Parallel()
	set := loadOne(t, poTemplate)
	cases := []struct{ name, old, new, want string }{
		{"two order ids", "Currency: EUR", "Currency: EUR\nOrder no. PO-4712", `field order_id: several values "PO-4711", "PO-4712"`},
		{"decimal comma under a decimal point", "4         1,234.50       4,938.00", "4         1.234,50       4.938,00", `lines[2].unit_price: "1.234,50" does not fit the decimal separator "."`},
		{"quantity 1,5 under a decimal point", "Hex bolts M8                10  ", "Hex bolts M8                1,5  ", `lines[0].quantity: "1,5" does not fit`},
		{"two currencies", "Currency: EUR", "Currency: EUR\nCurrency: CHF", `field currency: several values "EUR", "CHF"`},
		{"bad grouping", "Net total   5,083.00", "Net total   50,83.00", `field total_net: "50,83.00" does not fit`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			text := strings.Replace(poText, c.old, c.new, 1)
			require.NotEqual(t, poText, text)
			_, err := runPO(t, set, text)
			require.Error(t, err)
			require.Equal(t, document.EINVALID, document.ErrorKind(err))
			require.Contains(t, err.Error(), c.want)
		})
	}
}

func TestPOWithoutCurrencyOrDate(t *testing.T) {
	t.Parallel()
	set := loadOne(t, poTemplate)
	run, err := runPO(t, set, strings.Replace(poText, "Currency: EUR\n", "", 1))
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	require.Equal(t, "", run.Order.Currency, "no currency printed and none stated: none invented")
	// Stated by the template's options: that one.
	run, err = runPO(t, loadOne(t, strings.Replace(poTemplate, `decimal_separator: "."`, "decimal_separator: \".\"\n  currency: CHF", 1)),
		strings.Replace(poText, "Currency: EUR\n", "", 1))
	require.NoError(t, err)
	require.Equal(t, "CHF", run.Order.Currency)

	noDate := strings.Replace(poText, "Date: 03/02/2026\n", "", 1)
	run, err = runPO(t, set, noDate)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeRejected, run.Outcome.Status)
	require.Equal(t, document.ReasonUnknownFormat, run.Outcome.Reason)
	require.Contains(t, run.Outcome.Detail, "no order date (field date)")
	// Opted in: dated by the day it was received, with a remark.
	fb := loadOne(t, poTemplate+"  date_fallback: receipt\n")
	run, err = fb.Run(t.Context(), noDate, template.RunOptions{Template: "trust", ReceivedAt: time.Date(2026, 5, 6, 23, 0, 0, 0, time.UTC)})
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	require.Equal(t, order.Date{Year: 2026, Month: time.May, Day: 6}, run.Order.IssueDate)
	require.Contains(t, strings.Join(run.Order.Remarks, "\n"), "dated by the day it was received")
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	ok := []struct{ in, sep, want string }{
		{"1234.5", ".", "1234.5"}, {"1,234.50", ".", "1234.50"}, {"1.234,50", ",", "1234.50"}, {"1 234,50", ",", "1234.50"},
		{"1\u00a0234,50", ",", "1234.50"}, {"1'234.50", ".", "1234.50"}, {"1’234.50", ".", "1234.50"}, {"12,34,567.00", ".", "1234567.00"},
		{"1,234,567", ".", "1234567"}, {"-5,00", ",", "-5.00"}, {"12,50-", ",", "-12.50"}, {"0.5", ".", "0.5"}, {"1.234", ",", "1234"},
	}
	for _, c := range ok {
		got, err := template.ParseAmount(c.in, c.sep)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	for _, c := range []struct{ in, sep string }{
		{"2.256,19", "."}, {"1,5", "."}, {"12.34.5", ","}, {"1,2345.00", "."}, {"1.234.5", ","}, {"1,234 567.00", "."}, {"", "."}, {"abc", "."},
		{"1.2.3", "."}, {"5\n6", "."},
	} {
		_, err := template.ParseAmount(c.in, c.sep)
		require.Error(t, err, "%q with %q", c.in, c.sep)
	}
}

// A row whose first line is at the bottom of page 1 and whose quantity is
// on page 2 is one row; the lines block is one page (start: the column
// header, end: the page footer), so the row is continued by the next
// block. Continuation lines are joined with a space (join: space).
func TestRowContinuedOnNextPage(t *testing.T) {
	t.Parallel()
	const tpl = `
keywords: [PAGED BUYER]
fields:
  order_id: {parser: regex, regex: 'Order (\S+)'}
  date: {parser: regex, regex: 'Date (\S+)', type: date}
  lines:
    parser: lines
    start: Art\s+Description\s+Qty
    end: Carried forward|End of order
    first_line: '^(?P<supplier_article_id>[A-Z]-\d+)\s+(?P<description>\S.*?)(?:\s{2,}(?P<quantity>\d+))?\s*$'
    line: '^\s{4,}(?P<description>\S.*?)(?:\s{2,}(?P<quantity>\d+))?\s*$'
    join: space
docintake: {name: paged}
`
	const text = "PAGED BUYER   Order P-1   Date 2026-04-01\n" +
		"Art    Description                 Qty\n" +
		"A-1    Bolts                       10\n" +
		"A-2    Hydraulic hose DN10 with\n" +
		"Carried forward\n\fPAGED BUYER   Order P-1   page 2\n" +
		"Art    Description                 Qty\n" +
		"       fittings, 1500 mm           25\n" +
		"A-3    Nuts                        30\n" +
		"End of order\n"
	run, err := loadOne(t, tpl).Run(t.Context(), text, template.RunOptions{Template: "paged"})
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	require.Len(t, run.Order.Items, 3)
	require.Equal(t, "A-2", run.Order.Items[1].SupplierArticleID)
	require.Equal(t, "Hydraulic hose DN10 with fittings, 1500 mm", run.Order.Items[1].Description)
	require.Equal(t, "25", run.Order.Items[1].Quantity)
	require.Equal(t, "30", run.Order.Items[2].Quantity)

	// By default (join: newline) continuation lines are joined by a
	// newline inside the value, as invoice2data does.
	nl := strings.Replace(tpl, "    join: space\n", "", 1)
	run, err = loadOne(t, nl).Run(t.Context(), text, template.RunOptions{Template: "paged"})
	require.NoError(t, err)
	require.Equal(t, "Hydraulic hose DN10 with\nfittings, 1500 mm", run.Order.Items[1].Description)

	// A continuation line that brings a second quantity: never merged.
	two := strings.Replace(text, "A-1    Bolts                       10\n", "A-1    Bolts                       10\n       M8 zinc plated              12\n", 1)
	_, err = loadOne(t, tpl).Run(t.Context(), two, template.RunOptions{Template: "paged"})
	require.ErrorContains(t, err, `field lines[0].quantity: several values "10 12" (continued on another line)`)
}

// A regex that hits its match timeout is an error on that field (in the
// run's error and the debug trace), never "no match". Not parallel: it
// shortens the package's MatchTimeout while compiling.
func TestMatchTimeoutIsFieldError(t *testing.T) {
	old := template.MatchTimeout
	template.MatchTimeout = time.Millisecond
	tpl := strings.Replace(poTemplate, `order_id: {parser: regex, regex: 'Order no\.?\s+(\S+)'}`,
		`order_id: {parser: regex, regex: '(?=(?:a|aa)+b)(a+)'}`, 1)
	set := loadOne(t, tpl)
	// The same in a lines block: a line whose skip_line regex times out.
	linesTpl := strings.Replace(poTemplate, "    end: Net total\n", "    end: Net total\n    skip_line: '(?=(?:a|aa)+b)a+'\n", 1)
	require.NotEqual(t, poTemplate, linesTpl)
	linesSet := loadOne(t, linesTpl)
	template.MatchTimeout = old
	_, err := runPO(t, linesSet, strings.Replace(poText, "Net total", strings.Repeat("a", 40)+"!\nNet total", 1))
	require.ErrorContains(t, err, "field lines:")
	require.ErrorContains(t, err, "match timeout")
	text := poText + strings.Repeat("a", 40) + "!\n"
	run, err := runPO(t, set, text)
	require.Error(t, err)
	require.Contains(t, err.Error(), "field order_id:")
	require.Contains(t, err.Error(), "match timeout")
	require.NotNil(t, run)
	var ft *template.FieldTrace
	for i := range run.Trace.Fields {
		if run.Trace.Fields[i].Name == "order_id" {
			ft = &run.Trace.Fields[i]
		}
	}
	require.NotNil(t, ft)
	require.NotEmpty(t, ft.Err, "the debug view marks the field")
}

// A field's own decimal_separator overrides the template's: the totals of
// this PO print decimal commas while its lines print decimal points.
func TestPerFieldDecimalSeparator(t *testing.T) {
	t.Parallel()
	tpl := strings.NewReplacer(
		`total_net: {parser: regex, regex: 'Net total\s+([\d,.]+)'}`, `total_net: {parser: regex, regex: 'Net total\s+([\d,.]+)', decimal_separator: ','}`,
		`total_tax: {parser: regex, regex: 'VAT\s+([\d,.]+)'}`, `total_tax: {parser: regex, regex: 'VAT\s+([\d,.]+)', decimal_separator: ','}`,
		`total_gross: {parser: regex, regex: 'Total\s+([\d,.]+)\s*$'}`, `total_gross: {parser: regex, regex: 'Total\s+([\d,.]+)\s*$', decimal_separator: ','}`,
	).Replace(poTemplate)
	require.NotEqual(t, poTemplate, tpl)
	text := strings.NewReplacer("Net total   5,083.00", "Net total   5.083,00", "VAT   965.77", "VAT   965,77", "Total   6,048.77", "Total   6.048,77").Replace(poText)
	run, err := runPO(t, loadOne(t, tpl), text)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	require.Equal(t, order.Totals{NetAmount: "5083.00", TaxAmount: "965.77", GrossAmount: "6048.77"}, run.Order.Totals)
	require.Equal(t, "4938.00", run.Order.Items[2].LineAmount, "the lines keep the template's decimal point")
}

// Rules decide before values are read: an invoice with a number the
// template cannot read is rejected as not an order, not a template error.
func TestRulesBeforeValueErrors(t *testing.T) {
	t.Parallel()
	set := loadOne(t, poTemplate+"  rules:\n    - {match: 'INVOICE', action: reject}\n")
	text := strings.Replace(poText, "Net total   5,083.00", "Net total   50,83.00\nINVOICE", 1)
	run, err := runPO(t, set, text)
	require.NoError(t, err)
	require.Equal(t, document.ReasonNotAnOrder, run.Outcome.Reason)
}

// Verify applies the docintake block to an order built elsewhere (an
// attached structured document): the same checks and reasons.
func TestVerifyBuiltOrder(t *testing.T) {
	t.Parallel()
	set := loadOne(t, poTemplate)
	tpl, ok := set.ByName("trust")
	require.True(t, ok)
	o := &order.Order{Type: order.TypeOrder, ID: "X-1", IssueDate: order.Date{Year: 2026, Month: time.January, Day: 2}, Currency: "JPY",
		Items:  []order.Item{{Position: "1", Quantity: "3", UnitPrice: "333", LineAmount: "999"}, {Position: "2", Quantity: "1", UnitPrice: "100", LineAmount: "100"}},
		Totals: order.Totals{NetAmount: "1099", TaxAmount: "110", GrossAmount: "1209"}}
	out, err := tpl.Verify(t.Context(), o, nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, out.Status, out.String())
	// JPY has no minor unit: the tolerance is 0.5.
	o.Totals.GrossAmount = "1209.4"
	out, err = tpl.Verify(t.Context(), o, nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, out.Status, out.String())
	o.Totals.GrossAmount = "1210"
	out, err = tpl.Verify(t.Context(), o, nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, document.ReasonCannotParseItems, out.Reason)
	require.Contains(t, out.Detail, "gross_total: net total 1099 + tax total 110 = 1209, printed gross total 1210 (difference 1, tolerance 0.5)")
}
