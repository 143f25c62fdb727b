package template_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/template"
)

// discTemplate reads discText: a discount column as a percentage ("75.00 %",
// "10%") or an amount, a unit column some lines leave empty, and a printed
// total quantity.
const discTemplate = `
issuer: Disc Buyer
keywords: [DISC BUYER, PURCHASE ORDER]
fields:
  order_id: {parser: regex, regex: 'PO Number:\s+(\d+)'}
  date: {parser: regex, regex: 'Date:\s+(\d\d/\d\d/\d{4})', type: date}
  total_net: {parser: regex, regex: 'Net Total\s+([\d,.]+)'}
  total_quantity: {parser: regex, regex: 'Total Quantity:\s+(\d{1,3}(?: \d{3})*)'}
  lines:
    parser: lines
    start: Line\s+Item
    end: Net Total
    line: '^\s*(?P<position>\d+)\s+(?P<supplier_article_id>\S+)\s+(?P<description>.+?)\s{2,}(?P<quantity>\d[\d,]*)\s+(?:(?P<unit>[A-Z]{2,3})\s+)?(?P<unit_price>[\d.,]+)\s+(?:(?P<discount_percent>[\d.]+\s?%)\s+)?(?:(?P<discount_amount>[\d.,]+)\s+)?(?P<line_amount>[\d.,]+)\s*$'
options:
  decimal_separator: "."
  date_formats: ['%m/%d/%Y']
docintake:
  name: disc
`

// discText: 8 × 125.00 × (1 − 0.75) = 250.00; 12 × 9.50 − 6.00 = 108.00;
// 8865 × 0.40 × (1 − 0.10) = 3,191.40 (no unit printed). Net 3,549.40;
// quantities 8 + 12 + 8865 = 8 885.
const discText = `DISC BUYER                                   PURCHASE ORDER
PO Number: 4500099
Date: 06/03/2024

Line  Item     Description        Qty  Unit   List Price   Disc. %   Disc. Amt      Amount
1     PX-100   Pump housing         8  EA         125.00   75.00 %                  250.00
2     PX-200   Seal kit            12  EA           9.50                  6.00      108.00
3     PX-300   Gasket            8865               0.40       10%                3,191.40
Net Total   3,549.40
Total Quantity: 8 885
`

func runDisc(t *testing.T, yml, text string) *template.Run {
	t.Helper()
	run, err := loadOne(t, yml).Run(t.Context(), text, template.RunOptions{Template: "disc", Debug: true})
	require.NoError(t, err)
	return run
}

func TestLineDiscounts(t *testing.T) {
	t.Parallel()
	run := runDisc(t, discTemplate, discText)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	o := run.Order
	require.Len(t, o.Items, 3)
	got := make([][5]string, len(o.Items))
	for i, it := range o.Items {
		got[i] = [5]string{it.Quantity, it.UnitPrice, it.DiscountPercent, it.DiscountAmount, it.LineAmount}
	}
	// The list price stays the unit price; the line amount is the printed,
	// discounted one.
	require.Equal(t, [][5]string{
		{"8", "125.00", "75.00", "", "250.00"},
		{"12", "9.50", "", "6.00", "108.00"},
		{"8865", "0.40", "10", "", "3191.40"},
	}, got)
	require.Equal(t, "8885", o.Totals.Quantity)

	checks := strings.Join(run.Trace.Checks, "\n")
	require.Contains(t, checks, `check line_amount ok: line 1 (position 1, "PX-100"): quantity 8 × unit price 125.00 × (1 − discount 75.00 %) = 250, printed line amount 250.00`)
	require.Contains(t, checks, `check line_amount ok: line 2 (position 2, "PX-200"): quantity 12 × unit price 9.50 − discount 6.00 = 108, printed line amount 108.00`)
	require.Contains(t, checks, "check quantity_total ok: sum of 3 item quantities = 8885, printed total quantity 8885")

	doc, err := opentrans.Marshal(o, opentrans.WriteOptions{GenerationTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	require.NoError(t, err)
	opentranstest.Validate(t, doc)
	back, err := opentrans.Read(strings.NewReader(string(doc)))
	require.NoError(t, err)
	// 75 % and 10 % travel as the items' allowances, 6.00 off 12 units as
	// 0.5 per unit; the printed prices and amounts are unchanged.
	require.Equal(t, []string{"75.00", "", "10"}, []string{back.Items[0].DiscountPercent, back.Items[1].DiscountPercent, back.Items[2].DiscountPercent})
	require.Equal(t, "6.00", back.Items[1].DiscountAmount)
	require.Equal(t, "125.00", back.Items[0].UnitPrice)
	require.Contains(t, string(doc), "<AOC_PERCENTAGE_FACTOR>0.7500</AOC_PERCENTAGE_FACTOR>")
	require.Contains(t, string(doc), "<AOC_MONETARY_AMOUNT>0.5</AOC_MONETARY_AMOUNT>")
}

func TestLineDiscountChecked(t *testing.T) {
	t.Parallel()
	// 8 × 125.00 × (1 − 0.70) = 300, not the printed 250.00.
	run := runDisc(t, discTemplate, strings.Replace(discText, "75.00 %", "70.00 %", 1))
	require.Equal(t, template.OutcomeRejected, run.Outcome.Status, run.Outcome.String())
	require.Equal(t, document.ReasonCannotParseItems, run.Outcome.Reason)
	require.Contains(t, run.Outcome.Detail, `line_amount: line 1 (position 1, "PX-100"): quantity 8 × unit price 125.00 × (1 − discount 70.00 %) = 300, printed line amount 250.00 (difference 50, tolerance 0.005)`)

	// A template that does not read the discount column fails the same line.
	noDisc := strings.Replace(discTemplate, "(?P<discount_percent>", "(?P<disc>", 1)
	run = runDisc(t, noDisc, discText)
	require.Equal(t, template.OutcomeRejected, run.Outcome.Status, run.Outcome.String())
	require.Contains(t, run.Outcome.Detail, "quantity 8 × unit price 125.00 = 1000, printed line amount 250.00")
}

func TestQuantityTotal(t *testing.T) {
	t.Parallel()
	// A detail page repeating article PX-300 read as another item.
	repeated := strings.Replace(discText, "Net Total", "4     PX-300   Gasket               20               0.40                          8.00\nNet Total", 1)
	wrong := strings.Replace(discText, "Total Quantity: 8 885", "Total Quantity: 8 880", 1)
	for name, c := range map[string]struct{ text, detail string }{
		"wrong total": {wrong, "quantity_total: sum of 3 item quantities = 8885, printed total quantity 8880 (difference 5, tolerance 0)"},
		// 8885 + 20 = 8905 (the net total fails as well: 3549.40 + 8.00).
		"repeated article": {repeated, "quantity_total: sum of 4 item quantities = 8905, printed total quantity 8885 (difference 20, tolerance 0)"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run := runDisc(t, discTemplate, c.text)
			require.Equal(t, template.OutcomeRejected, run.Outcome.Status, run.Outcome.String())
			require.Equal(t, document.ReasonCannotParseItems, run.Outcome.Reason)
			require.Contains(t, run.Outcome.Detail, "arithmetic check failed: ")
			require.Contains(t, run.Outcome.Detail, c.detail)
		})
	}
	t.Run("switched off", func(t *testing.T) {
		t.Parallel()
		run := runDisc(t, discTemplate+"  checks: {quantity_total: false}\n", wrong)
		require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
		require.Equal(t, "8880", run.Order.Totals.Quantity)
	})
}

func TestDefaultUnit(t *testing.T) {
	t.Parallel()
	// Line 3 prints no unit.
	run := runDisc(t, discTemplate, discText)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	require.Equal(t, "", run.Order.Items[2].Unit)
	require.Equal(t, []string{"No unit printed for position 3: their quantities are written in pieces (C62)"}, run.Order.Remarks)

	run = runDisc(t, discTemplate+"  default_unit: kg\n", discText)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	require.Equal(t, []string{"EA", "EA", "kg"}, []string{run.Order.Items[0].Unit, run.Order.Items[1].Unit, run.Order.Items[2].Unit})
	require.Empty(t, run.Order.Remarks)
	doc, err := opentrans.Marshal(run.Order, opentrans.WriteOptions{})
	require.NoError(t, err)
	require.Contains(t, string(doc), "<bmecat:ORDER_UNIT>KGM</bmecat:ORDER_UNIT>")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.yml"), []byte(discTemplate+"  default_unit: crates of 12\n"), 0o600))
	_, err = template.Load(dir)
	require.ErrorContains(t, err, "docintake.default_unit")
	require.ErrorContains(t, err, `default_unit "crates of 12" is not a known unit`)
}
