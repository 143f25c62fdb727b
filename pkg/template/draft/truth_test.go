package draft_test

import (
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template/draft"
	"github.com/stretchr/testify/require"
)

// usTruth is usOrder as a person reads it off the page.
var usTruth = order.Order{Type: order.TypeOrder, ID: "4500-1234", IssueDate: order.Date{Year: 2024, Month: 3, Day: 4},
	Currency: "USD", Items: []order.Item{
		{SupplierArticleID: "A-1001", Description: "Hex bolt M8 x 40 zinc plated", Quantity: "1200", Unit: "EA", UnitPrice: "0.12", LineAmount: "144.00"},
		{SupplierArticleID: "B-2002", Description: "Washer 8.4 mm DIN 125", Quantity: "500", Unit: "EA", UnitPrice: "0.04", LineAmount: "20.00"},
		{SupplierArticleID: "C-3003", Description: "Hydraulic hose DN10 with fittings, length 1500 mm", Quantity: "2", Unit: "EA", UnitPrice: "625.50", LineAmount: "1251.00"},
		{SupplierArticleID: "D-4004", Description: "O-ring 25x3", Quantity: "10", Unit: "EA", UnitPrice: "1.00", LineAmount: "10.00"},
	}, Totals: order.Totals{NetAmount: "1425.00", TaxAmount: "114.00", GrossAmount: "1539.00"}}

// An order printing a second order number (the buyer's customer order
// number) leaves the generic reader unsure which is the PO's: alone, the
// draft falls back to labels. With the order a person confirmed, the
// draft is anchored on the confirmed number's label and reads the
// confirmed values back.
func TestDraftAnchoredOnConfirmedOrder(t *testing.T) {
	t.Parallel()
	ambiguous := strings.Replace(usOrder, "Payment Terms: Net 30", "Payment Terms: Net 30     Customer Order No.: 77-AB", 1)

	plain := build(t, ambiguous)
	require.False(t, plain.ReadsBack())
	require.Contains(t, report(t, plain), "the generic reader does not prove a.pdf")

	truth := usTruth
	d, err := draft.Build(t.Context(), []draft.Sample{{Name: "a.pdf", Text: ambiguous, Truth: &truth}}, draft.Options{})
	require.NoError(t, err)
	r := report(t, d)
	require.True(t, d.ReadsBack(), r)
	require.Contains(t, r, "reading: anchored on the order a person confirmed")
	require.Contains(t, r, `order_id        found   label "PO No.:"`)
	require.Contains(t, r, "read back: a.pdf as confirmed (order id, dates, currency, totals, 4 items)")
	o := read(t, d, ambiguous)
	require.Equal(t, "4500-1234", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 3, Day: 4}, o.IssueDate)
	require.Equal(t, "1539.00", o.Totals.GrossAmount)
	require.Len(t, o.Items, 4)

	// A confirmed number the page does not print where a reader looks is
	// said, not invented.
	truth.ID = "4500-9999"
	d, err = draft.Build(t.Context(), []draft.Sample{{Name: "a.pdf", Text: ambiguous, Truth: &truth}}, draft.Options{})
	require.NoError(t, err)
	r = report(t, d)
	require.False(t, d.ReadsBack())
	require.Contains(t, r, `order_id: the confirmed "4500-9999" is not printed where the generic reader looks`)
}
