package opentrans_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

// discountOrder has line discounts as POs print them; every line amount is
// quantity × price ÷ basis × (1 − percent/100) − amount.
func discountOrder() *order.Order {
	return &order.Order{
		Type: order.TypeOrder, ID: "PO-75", IssueDate: d(2024, 6, 3), Currency: "USD", Parties: buyerAndSupplier(),
		Items: []order.Item{
			// 8 × 12.50 × (1 − 0.75) = 25.00
			{Position: "1", Quantity: "8", Unit: "C62", UnitPrice: "12.50", DiscountPercent: "75.00", LineAmount: "25.00"},
			// 4 × 50.00 − 20.00 = 180.00; 20.00 off 4 units is 5 per unit
			{Position: "2", Quantity: "4", Unit: "C62", UnitPrice: "50.00", DiscountAmount: "20.00", LineAmount: "180.00"},
			// 1000 × 12.00 ÷ 100 × 0.9 − 8.00 = 100.00; 8.00 off 1000 units
			// priced per 100 is 0.8 per 100 units
			{Position: "3", Quantity: "1000", Unit: "C62", UnitPrice: "12.00", PriceBasisQuantity: "100",
				DiscountPercent: "10", DiscountAmount: "8.00", LineAmount: "100.00"},
			// 3 × 10.00 − 10.00 = 20.00; 10 ÷ 3 per unit has no exact decimal
			{Position: "4", Quantity: "3", Unit: "C62", UnitPrice: "10.00", DiscountAmount: "10.00", LineAmount: "20.00"},
			// no price: nowhere to put an allowance
			{Position: "5", Quantity: "2", Unit: "C62", DiscountPercent: "5"},
		},
		Totals: order.Totals{Quantity: "1017"},
	}
}

// buyerAndSupplier are the parties every document needs, so that the
// documents read back to the model as written.
func buyerAndSupplier() []order.Party {
	return []order.Party{{Role: order.RoleBuyer, ID: "B"}, {Role: order.RoleSupplier, ID: "S"}}
}

func TestWrite_lineDiscounts(t *testing.T) {
	t.Parallel()
	o := discountOrder()
	doc := marshalValid(t, o)

	// The printed list price and the printed, discounted line amount.
	require.Equal(t, []string{"12.50", "50.00", "12.00", "10.00"}, texts(t, doc, "PRODUCT_PRICE_FIX/PRICE_AMOUNT"))
	require.Equal(t, []string{"25.00", "180.00", "100.00", "20.00"}, texts(t, doc, "ORDER_ITEM/PRICE_LINE_AMOUNT"))

	const aoc = "PRODUCT_PRICE_FIX/ALLOW_OR_CHARGES_FIX/ALLOW_OR_CHARGE"
	require.Equal(t, []string{"allowance", "allowance", "allowance", "allowance"}, attrs(t, doc, aoc, "type"))
	require.Equal(t, []string{"rebate", "rebate", "rebate", "rebate"}, texts(t, doc, aoc+"/ALLOW_OR_CHARGE_TYPE"))
	// Items 1, 2 and 3 (percentage first, then the amount); item 4 has no
	// exact amount per unit.
	require.Equal(t, []string{"1", "1", "1", "2"}, texts(t, doc, aoc+"/ALLOW_OR_CHARGE_SEQUENCE"))
	// 75 % and 10 % as factors.
	require.Equal(t, []string{"0.7500", "0.10"}, texts(t, doc, aoc+"/ALLOW_OR_CHARGE_VALUE/AOC_PERCENTAGE_FACTOR"))
	// Per price unit: 20.00 ÷ 4 and 8.00 × 100 ÷ 1000.
	require.Equal(t, []string{"5", "0.8"}, texts(t, doc, aoc+"/ALLOW_OR_CHARGE_VALUE/AOC_MONETARY_AMOUNT"))

	require.Equal(t, []string{
		"Discount amount of the line: 20.00",
		"Discount amount of the line: 8.00",
		"Discount amount of the line: 10.00",
		"Discount in percent: 5",
	}, texts(t, doc, "ORDER_ITEM/REMARKS"))
	require.Equal(t, []string{"Total quantity: 1017"}, texts(t, doc, "ORDER_INFO/REMARKS"))

	require.Equal(t, o, read(t, doc), "model -> XML -> model")
	roundTripStable(t, doc)
}

func TestWrite_discountSurchargeAndZero(t *testing.T) {
	t.Parallel()
	o := &order.Order{Type: order.TypeInvoice, ID: "R-1", IssueDate: d(2024, 6, 3), Currency: "EUR", Parties: buyerAndSupplier(),
		Totals: order.Totals{NetAmount: "105.00", GrossAmount: "105.00"},
		Items: []order.Item{
			// A negative discount is a surcharge: 1 × 100.00 × 1.05 = 105.00.
			{Position: "1", Quantity: "1", Unit: "C62", UnitPrice: "100.00", DiscountPercent: "-5", LineAmount: "105.00"},
			// "0.00 %" as 14 of the 20 POs with a discount column print it.
			{Position: "2", Quantity: "1", Unit: "C62", UnitPrice: "0.00", DiscountPercent: "0.00", DiscountAmount: "0", LineAmount: "0.00"},
		}}
	doc := marshalValid(t, o)
	const aoc = "PRODUCT_PRICE_FIX/ALLOW_OR_CHARGES_FIX/ALLOW_OR_CHARGE"
	require.Equal(t, []string{"surcharge"}, attrs(t, doc, aoc, "type"), "only item 1 has one")
	require.Equal(t, []string{"charge"}, texts(t, doc, aoc+"/ALLOW_OR_CHARGE_TYPE"))
	require.Equal(t, []string{"0.05"}, texts(t, doc, aoc+"/ALLOW_OR_CHARGE_VALUE/AOC_PERCENTAGE_FACTOR"))
	require.Empty(t, texts(t, doc, "INVOICE_ITEM/REMARKS"))

	want := *o
	want.Items = append([]order.Item(nil), o.Items...)
	want.Items[1].DiscountPercent, want.Items[1].DiscountAmount = "", "" // a zero discount is not written
	require.Equal(t, &want, read(t, doc))
	roundTripStable(t, doc)
}

func TestWrite_discountNotDecimal(t *testing.T) {
	t.Parallel()
	for _, it := range []order.Item{
		{Quantity: "1", UnitPrice: "10", DiscountPercent: "75 %"},
		{Quantity: "1", UnitPrice: "10", DiscountAmount: "1,50"},
	} {
		o := &order.Order{Type: order.TypeOrder, ID: "1", IssueDate: d(2024, 1, 2), Items: []order.Item{it}}
		_, err := opentrans.Marshal(o, testOpts)
		require.Error(t, err)
		require.Equal(t, document.EINVALID, document.ErrorKind(err))
		require.Contains(t, err.Error(), "discount")
	}
}

// A partner's document: allowances without our notes, a freight surcharge
// between them, an allowance on another base (not read).
func TestRead_partnerAllowances(t *testing.T) {
	t.Parallel()
	doc := `<ORDER version="2.1"><ORDER_HEADER><ORDER_INFO><ORDER_ID>P-1</ORDER_ID><ORDER_DATE>2024-06-03</ORDER_DATE>
</ORDER_INFO></ORDER_HEADER><ORDER_ITEM_LIST>
<ORDER_ITEM><LINE_ITEM_ID>1</LINE_ITEM_ID><QUANTITY>4</QUANTITY><ORDER_UNIT>C62</ORDER_UNIT>
 <PRODUCT_PRICE_FIX><PRICE_AMOUNT>1200</PRICE_AMOUNT><ALLOW_OR_CHARGES_FIX>
  <ALLOW_OR_CHARGE type="allowance"><ALLOW_OR_CHARGE_VALUE><AOC_PERCENTAGE_FACTOR>0.5</AOC_PERCENTAGE_FACTOR></ALLOW_OR_CHARGE_VALUE>
   <ALLOW_OR_CHARGE_BASE>100</ALLOW_OR_CHARGE_BASE></ALLOW_OR_CHARGE>
  <ALLOW_OR_CHARGE type="allowance"><ALLOW_OR_CHARGE_TYPE>rebate</ALLOW_OR_CHARGE_TYPE>
   <ALLOW_OR_CHARGE_VALUE><AOC_PERCENTAGE_FACTOR>0.10</AOC_PERCENTAGE_FACTOR></ALLOW_OR_CHARGE_VALUE></ALLOW_OR_CHARGE>
  <ALLOW_OR_CHARGE type="surcharge"><ALLOW_OR_CHARGE_TYPE>freight</ALLOW_OR_CHARGE_TYPE>
   <ALLOW_OR_CHARGE_VALUE><AOC_MONETARY_AMOUNT>2.5</AOC_MONETARY_AMOUNT></ALLOW_OR_CHARGE_VALUE></ALLOW_OR_CHARGE>
 </ALLOW_OR_CHARGES_FIX></PRODUCT_PRICE_FIX><PRICE_LINE_AMOUNT>4330</PRICE_LINE_AMOUNT></ORDER_ITEM>
</ORDER_ITEM_LIST><ORDER_SUMMARY><TOTAL_ITEM_NUM>1</TOTAL_ITEM_NUM></ORDER_SUMMARY></ORDER>`
	o, err := opentrans.Read(strings.NewReader(doc))
	require.NoError(t, err)
	it := o.Items[0]
	require.Equal(t, "10", it.DiscountPercent, "0.10 as a percentage; the entry on base 100 is not read")
	// A surcharge of 2.5 per unit on 4 units: a discount of -10 on the line
	// (4 × 1200 × 0.9 + 4 × 2.5 = 4330).
	require.Equal(t, "-10", it.DiscountAmount)
	require.Empty(t, it.Remarks)
}
