package orderflags_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/orderflags"
	"github.com/docintake/docintake/pkg/pricelist"
	"github.com/stretchr/testify/require"
)

func date(y int, m time.Month, d int) order.Date { return order.Date{Year: y, Month: m, Day: d} }

// received is when the test's PO arrived: 2026-02-05.
var received = time.Date(2026, 2, 5, 9, 30, 0, 0, time.UTC)

func po(items ...order.Item) *order.Order {
	return &order.Order{Type: order.TypeOrder, ID: "PO-1", IssueDate: date(2026, 2, 3), Currency: "EUR", Items: items}
}

var list = []pricelist.Entry{
	{Line: 2, Article: "S-100", Currency: "EUR", UnitPrice: "1.50", PriceBasis: "1", TolerancePct: "2"},
	{Line: 3, Article: "S-200", Currency: "EUR", UnitPrice: "25.00", PriceBasis: "100", Unit: "C62", TolerancePct: "0"},
	{Line: 4, Article: "S-300", Currency: "EUR", UnitPrice: "4.00", PriceBasis: "1", ValidTo: date(2025, 12, 31), TolerancePct: "0"},
	{Line: 5, Article: "S-300", Currency: "EUR", UnitPrice: "4.40", PriceBasis: "1", ValidFrom: date(2026, 1, 1), TolerancePct: "0"},
}

// A price within the entry's tolerance is no flag; outside it, the flag
// names the expected and the printed price. 1.50 ± 2 % is 1.47 to 1.53.
func TestPriceTolerance(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"1.50", "1.47", "1.53"} {
		require.Empty(t, orderflags.Check(po(order.Item{SupplierArticleID: "S-100", UnitPrice: p, Quantity: "10"}), list, received), p)
	}
	flags := orderflags.Check(po(order.Item{Position: "1", SupplierArticleID: "S-100", BuyerArticleID: "B-1",
		UnitPrice: "1.40", Quantity: "10"}), list, received)
	require.Equal(t, []orderflags.Flag{{Kind: orderflags.KindPrice, Line: 1, Position: "1", Article: "S-100",
		Expected: "1.50", Printed: "1.40",
		Message: "line 1 (S-100): price 1.40 EUR per C62 is 6.67 % below the price list's 1.50 (tolerance 2 %; price list for every buyer, line 2)"}},
		flags)

	above := orderflags.Check(po(order.Item{BuyerArticleID: "s-100", UnitPrice: "1.54"}), list, received)
	require.Len(t, above, 1)
	require.Contains(t, above[0].Message, "is 2.67 % above the price list's 1.50")
}

// Prices are compared per unit: 0.25 per piece is 25.00 per 100 pieces;
// the expected price is shown in the line's own basis, and the line's
// discounts count.
func TestPriceBasisAndDiscount(t *testing.T) {
	t.Parallel()
	require.Empty(t, orderflags.Check(po(order.Item{SupplierArticleID: "S-200", UnitPrice: "0.25", Unit: "Stk"}), list, received))
	flags := orderflags.Check(po(order.Item{SupplierArticleID: "S-200", UnitPrice: "30.00", PriceBasisQuantity: "100",
		Unit: "pcs"}), list, received)
	require.Len(t, flags, 1)
	require.Equal(t, "25.00", flags[0].Expected)
	require.Contains(t, flags[0].Message, "price 30.00 EUR per 100 C62 is 20.00 % above the price list's 25.00")

	// Printed 2.00 less 25 % is 1.50 net: the list's price.
	require.Empty(t, orderflags.Check(po(order.Item{SupplierArticleID: "S-100", UnitPrice: "2.00", DiscountPercent: "25"}), list, received))
	flags = orderflags.Check(po(order.Item{SupplierArticleID: "S-100", UnitPrice: "2.00", DiscountPercent: "50",
		Quantity: "10"}), list, received)
	require.Len(t, flags, 1)
	require.Equal(t, "1.00", flags[0].Printed)
	require.Contains(t, flags[0].Message, "net price 1.00 (printed 2.00 less 50 % discount) EUR per C62 is 33.33 % below")
}

// A line the unit table converted (a case of 12 at 18.00 is 12 pieces at
// 1.50) is compared in the supplier's unit; the message says what the PO
// printed.
func TestPriceConvertedUnit(t *testing.T) {
	t.Parallel()
	it := order.Item{SupplierArticleID: "S-100", Quantity: "24", Unit: "C62", UnitPrice: "1.50",
		AsPrinted: &order.PrintedUnit{Quantity: "2", Unit: "CS", UnitPrice: "18.00", Factor: "12", Table: "client"}}
	require.Empty(t, orderflags.Check(po(it), list, received))
	it.UnitPrice, it.AsPrinted.UnitPrice = "1.25", "15.00"
	flags := orderflags.Check(po(it), list, received)
	require.Len(t, flags, 1)
	require.Equal(t, "line 1 (S-100): price 1.25 (printed 15.00 per CS of 12) EUR per C62 is 16.67 % below the price list's 1.50 (tolerance 2 %; price list for every buyer, line 2)",
		flags[0].Message)
}

// The entry valid on the order date prices the line; an article listed
// with no entry for the order (another currency, unit, or validity) is
// flagged as not checked, an article the list does not name is not.
func TestPriceValidity(t *testing.T) {
	t.Parallel()
	require.Empty(t, orderflags.Check(po(order.Item{SupplierArticleID: "S-300", UnitPrice: "4.40"}), list, received))
	flags := orderflags.Check(po(order.Item{SupplierArticleID: "S-300", UnitPrice: "4.00"}), list, received)
	require.Len(t, flags, 1)
	require.Equal(t, "4.40", flags[0].Expected, "last year's price is not this year's")

	old := po(order.Item{SupplierArticleID: "S-300", UnitPrice: "4.00"})
	old.IssueDate = date(2025, 11, 30)
	require.Empty(t, orderflags.Prices(old, list, received), "an order of 2025 is priced by the 2025 entry")

	usd := po(order.Item{SupplierArticleID: "S-100", UnitPrice: "1.50"})
	usd.Currency = "USD"
	flags = orderflags.Check(usd, list, received)
	require.Len(t, flags, 1)
	require.Equal(t, orderflags.KindPriceNoEntry, flags[0].Kind)
	require.Equal(t, "line 1 (S-100): price 1.50 USD not checked: the price list has no entry for USD per C62 valid on 2026-02-03 (the list has EUR per any unit always, line 2)",
		flags[0].Message)

	require.Empty(t, orderflags.Check(po(order.Item{SupplierArticleID: "S-999", UnitPrice: "9"}, order.Item{SupplierArticleID: "S-100"}),
		list, received), "an unlisted article and a line without price are not checked")
}

// A requested delivery date before the order date, or past on the day the
// PO arrived, is flagged; a line's date equal to the header's only once.
func TestDeliveryDates(t *testing.T) {
	t.Parallel()
	o := po(order.Item{Position: "10", BuyerArticleID: "B-1", DeliveryDate: date(2026, 2, 1)},
		order.Item{Position: "20", BuyerArticleID: "B-2", DeliveryDate: date(2026, 2, 4)},
		order.Item{Position: "30", BuyerArticleID: "B-3", DeliveryDate: date(2026, 2, 5)},
		order.Item{Position: "40", BuyerArticleID: "B-4", DeliveryDate: date(2026, 2, 2)})
	o.DeliveryDate = date(2026, 2, 2)
	flags := orderflags.Check(o, nil, received)
	require.Equal(t, []orderflags.Flag{
		{Kind: orderflags.KindDeliveryBeforeOrder, Expected: "2026-02-03", Printed: "2026-02-02",
			Message: "the order's requested delivery date 2026-02-02 is before the order date 2026-02-03"},
		{Kind: orderflags.KindDeliveryBeforeOrder, Line: 1, Position: "10", Article: "B-1", Expected: "2026-02-03", Printed: "2026-02-01",
			Message: "line 1 (position 10, B-1): requested delivery date 2026-02-01 is before the order date 2026-02-03"},
		{Kind: orderflags.KindDeliveryPast, Line: 2, Position: "20", Article: "B-2", Expected: "2026-02-05", Printed: "2026-02-04",
			Message: "line 2 (position 20, B-2): requested delivery date 2026-02-04 had passed when the order arrived on 2026-02-05"},
	}, flags)

	orderflags.Apply(o, flags)
	require.Equal(t, []string{"docintake flag delivery_date_before_order: " + flags[0].Message}, o.Remarks)
	require.Equal(t, []string{"docintake flag delivery_date_before_order: " + flags[1].Message}, o.Items[0].Remarks)
	require.Equal(t, []string{"docintake flag delivery_date_past: " + flags[2].Message}, o.Items[1].Remarks)
	require.Empty(t, o.Items[2].Remarks)
}

func TestArticles(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"S-1", "B 1"}, orderflags.Articles(po(order.Item{SupplierArticleID: "s-1", BuyerArticleID: "b  1", UnitPrice: "1"},
		order.Item{SupplierArticleID: "S-2"})))
}
