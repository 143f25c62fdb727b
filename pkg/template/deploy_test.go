package template_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

func deployTemplates(t *testing.T) *template.Set {
	t.Helper()
	set, err := template.Load(filepath.Join(templatetest.RepoRoot(t), "deploy", "templates"))
	require.NoError(t, err)
	return set
}

type wantItem struct{ article, desc, qty, price, amount string }

type wantContoso struct {
	file, id        string
	date            order.Date
	supplier        order.Address
	shipTo          string // contact on the ship-to block
	buyerContact    string
	buyerEmail      string
	items           []wantItem
	net, tax, gross string
	remarks         []string
}

func date(y int, m time.Month, d int) order.Date { return order.Date{Year: y, Month: m, Day: d} }

var (
	adatum    = order.Address{Name: "Adatum Corporation", Contact: "Pradeep Gupta", Street: "3333 Bristol Street South Coast", City: "Costa Mesa", State: "CA", Zip: "92626", Phone: "1 (513) 555-9100"}
	fabrikam  = order.Address{Name: "Fabrikam, Inc.", Contact: "Jordan Miller", Street: "10900 Stonelake Blvd", City: "Austin", State: "TX", Zip: "78759", Phone: "1 (512) 555-5300"}
	relecloud = order.Address{Name: "Relecloud", Contact: "Enrico Cattaneo", Street: "7595 Technology Way #400", City: "Denver", State: "CO", Zip: "80237", Phone: "1 (720) 555-1700"}
	vanarsdel = order.Address{Name: "VanArsdel, Ltd.", Contact: "Jordan Miller", Street: "7875 Montgomery Rd Kenwood", City: "Cincinnati", State: "OH", Zip: "45236", Phone: "1 (513) 555-9630"}
)

// contosoOrders are the values printed on each Contoso purchase order
// (read from `pdftotext -layout`).
var contosoOrders = []wantContoso{
	{"contoso-po-Adatum-Adel.pdf", "190122", date(2019, 7, 27), adatum, "Adel Vance", "Adel Vance", "AdelV@Contoso.com",
		[]wantItem{{"MM4-4010", "Micro-Motor #4", "89", "62.00", "5518.00"}, {"SH-L2216", "Standard Housing, Large", "11", "22.00", "242.00"}},
		"5760.00", "512.64", "6547.55", []string{"Electromagnetic Sensitive", "Fragile"}},
	{"contoso-po-Adatum-Grady.pdf", "190324", date(2019, 8, 29), adatum, "Grady Archie", "Grady Archie", "GradyA@Contoso.com",
		[]wantItem{{"MM5-1121", "Micro-Motor #5", "35", "89.00", "3115.00"}, {"TH-S0155", "Test Housing, Small", "4", "55.00", "220.00"}},
		"3335.00", "296.82", "3801.09", []string{"Please ship ASAP", "Electromagnetic Sensitive"}},
	{"contoso-po-Adatum-Johanna.pdf", "190200", date(2019, 8, 1), adatum, "Johanna Lorenz", "Johanna Lorenz", "JohannaL@Contoso.com",
		[]wantItem{{"MM32-006", "High Output Micro-Motor #32", "12", "121.00", "1452.00"}, {"TH-S0003", "Test Housing, Small", "5", "48.00", "240.00"}},
		"1692.00", "150.59", "1940.29", []string{"Fragile / Electromagnetic Sensitive", "Please double wrap"}},
	{"contoso-po-Fabrikam-Adel.pdf", "190434", date(2019, 9, 25), fabrikam, "Adel Vance", "Adel Vance", "AdelV@Contoso.com",
		[]wantItem{{"GB45-555", "Graphene Battery 4500mAh 100C 44.4V", "28", "67.00", "1876.00"},
			{"CBG-BS452", "Charger - Graphene Battery 4500mAh", "15", "45.00", "675.00"},
			{"CP-00043", "Cable Pack – for GB45-555", "30", "22", "660.00"}},
		"3211.00", "285.78", "3660.65", []string{"Please ship ASAP", "Fragile / Electromagnetic / Heat", "Sensitive"}},
	{"contoso-po-Fabrikam-Christie.pdf", "190555", date(2019, 10, 4), fabrikam, "Christie Cline", "Christie Cline", "ChristieC @Contoso.com",
		[]wantItem{{"GB3-1022", "Graphene Battery 3000mAh 100C 44.4V", "24", "123.00", "2952.00"},
			{"CBG-BS306", "Charger - Graphene Battery 3000mAh", "8", "65.00", "520.00"},
			{"CP-00111", "Cable Pack – for GB3-1022", "25", "17", "425.00"}},
		"3897.00", "346.83", "4437.58", []string{"Fragile / Heat Sensitive / Electromagnetic", "Please ship ASAP"}},
	{"contoso-po-Relecloud-Isaiah.pdf", "190189", date(2019, 8, 18), relecloud, "Isaiah Langer", "Isaiah Langer", "IsaiahL@Contoso.com",
		[]wantItem{{"LA-10004", "Landing Assembly, Type X", "66", "15.00", "990.00"}, {"LAR-1004", "LA Retractor, Type X", "66", "18.00", "1188.00"},
			{"SS2-1001", "Side Stabilizer, Type X", "58", "4.00", "232.00"}},
		"2410.00", "214.49", "2753.47", []string{"Please double wrap", "Fragile"}},
	{"contoso-po-Relecloud-Johanna.pdf", "190195", date(2019, 8, 12), relecloud, "Johanna Lorenz", "Johanna Lorenz", "JohannaL@Contoso.com",
		[]wantItem{{"LA-10002", "Landing Assembly, Type I", "100", "8.00", "800.00"}, {"LAR-1007", "LA Retractor, Type I", "100", "13.00", "1300.00"},
			{"SS1-1005", "Side Stabilizer, Type I", "112", "3.00", "336.00"}},
		"2436.00", "216.80", "2782.91", []string{"Please double wrap"}},
	{"contoso-po-VanArsdel-Irvin.pdf", "190403", date(2019, 9, 21), vanarsdel, "Irvin Sayers", "Irvin Sayers", "IrvinS@Contoso.com",
		[]wantItem{{"APA-M011", "APA Assembly, Master", "12", "215.00", "2580.00"}, {"APA-S118", "APA Assembly, Sub1", "12", "388.00", "4656.00"},
			{"APA-S118", "APA Assembly, Sub2", "15", "164.00", "2460.00"}, {"APA-S118", "APA Assembly, Sub3", "12", "11.00", "132.00"}},
		"9828.00", "874.69", "11154.80", []string{"Fragile / Electromagnetic Sensitive", "Please double wrap"}},
}

func party(t *testing.T, o *order.Order, r order.Role) order.Party {
	t.Helper()
	p, ok := o.Party(r)
	require.True(t, ok, "no %s party", r)
	return p
}

func TestContosoOrders(t *testing.T) {
	t.Parallel()
	set := deployTemplates(t)
	dir := filepath.Join(templatetest.SharedDir(t), "corpus", "orders")
	for _, w := range contosoOrders {
		t.Run(w.file, func(t *testing.T) {
			t.Parallel()
			text := templatetest.PDFText(t, filepath.Join(dir, w.file))
			run, err := set.Run(t.Context(), text, template.RunOptions{PartyID: "CONTOSO"})
			require.NoError(t, err)
			require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
			o := run.Order
			require.Equal(t, order.TypeOrder, o.Type)
			require.Equal(t, w.id, o.ID)
			require.Equal(t, w.date, o.IssueDate)
			require.Equal(t, "USD", o.Currency)
			buyer := party(t, o, order.RoleBuyer)
			require.Equal(t, order.Address{Name: "Contoso Electronics", Contact: w.buyerContact, Street: "3800 148th Ave NE",
				City: "Redmond", State: "WA", Zip: "98052", Phone: "1 (800) 555-7676", Email: w.buyerEmail}, buyer.Address)
			require.Equal(t, w.supplier, party(t, o, order.RoleSupplier).Address)
			require.Equal(t, order.Address{Name: "Contoso Electronics", Contact: w.shipTo, Street: "21930 SE 51st St",
				City: "Issaquah", State: "WA", Zip: "98029", Phone: "1 (800) 555-7676"}, party(t, o, order.RoleDelivery).Address)
			require.Len(t, o.Items, len(w.items))
			for i, wi := range w.items {
				it := o.Items[i]
				require.Equal(t, wantItem{wi.article, wi.desc, wi.qty, wi.price, wi.amount},
					wantItem{it.SupplierArticleID, it.Description, it.Quantity, it.UnitPrice, it.LineAmount}, "item %d", i+1)
				require.Equal(t, itoa(i+1), it.Position)
			}
			// Shipping and handling as printed below the tax (SHIP/INS +
			// HANDLING), so that net + tax + these = the printed total.
			extra := map[string]string{"contoso-po-Adatum-Adel.pdf": "274.91", "contoso-po-Adatum-Grady.pdf": "169.27",
				"contoso-po-Adatum-Johanna.pdf": "97.7", "contoso-po-Fabrikam-Adel.pdf": "163.87", "contoso-po-Fabrikam-Christie.pdf": "193.75",
				"contoso-po-Relecloud-Isaiah.pdf": "128.98", "contoso-po-Relecloud-Johanna.pdf": "130.11", "contoso-po-VanArsdel-Irvin.pdf": "452.11"}
			require.Equal(t, order.Totals{NetAmount: w.net, TaxAmount: w.tax, GrossAmount: w.gross, ExtraCharges: extra[w.file]}, o.Totals)
			// The item table has no unit column (ITEM #, DESCRIPTION, QTY,
			// UNIT PRICE, TOTAL) and the template sets no default_unit, so
			// the order says that the quantities are written as pieces.
			require.Equal(t, append(slices.Clone(w.remarks), "No unit printed: every quantity is written in pieces (C62)"), o.Remarks)
			validateOpenTrans(t, o)
		})
	}
}

// validateOpenTrans checks the order's openTRANS document against the XSD.
func validateOpenTrans(t *testing.T, o *order.Order) {
	t.Helper()
	doc, err := opentrans.Marshal(o, opentrans.WriteOptions{GenerationTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	require.NoError(t, err)
	opentranstest.Validate(t, doc)
}

func TestOrderXComfort(t *testing.T) {
	t.Parallel()
	set := deployTemplates(t)
	text := templatetest.PDFText(t, filepath.Join(templatetest.SharedDir(t), "corpus", "orders", "orderx-ex01-order-comfort.pdf"))
	run, err := set.Run(t.Context(), text, template.RunOptions{PartyID: "ORDERX"})
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	o := run.Order
	require.Equal(t, "PO123456789", o.ID)
	require.Equal(t, date(2020, 3, 31), o.IssueDate)
	require.Equal(t, date(2020, 4, 15), o.DeliveryDate)
	require.Equal(t, "EUR", o.Currency)
	require.Equal(t, "PAYMENT_TERMS_DESC", o.PaymentTerms)
	require.Equal(t, []string{"Content of Note"}, o.Remarks)
	require.Equal(t, order.Party{Role: order.RoleBuyer, ID: "BY_ID_9587456", VATID: "FR 05 987 654 321", Address: order.Address{
		Name: "BUYER_NAME", Contact: "BUYER_CONTACT_NAME", Street: "BUYER_ADDR_1", Zip: "69001", City: "BUYER_CITY",
		CountryCoded: "FR", Phone: "+33 6 65 98 75 32", Email: "operation@buyer.com"}}, party(t, o, order.RoleBuyer))
	require.Equal(t, order.Party{Role: order.RoleSupplier, ID: "SUPPLIER_ID_321654", VATID: "FR 32 123 456 789", Address: order.Address{
		Name: "SELLER_NAME", Contact: "SELLER_CONTACT_NAME", Street: "SELLER_ADDR_1", Zip: "75001", City: "SELLER_CITY",
		CountryCoded: "FR", Phone: "+33 6 25 64 98 75", Email: "sales@seller.com"}}, party(t, o, order.RoleSupplier))
	require.Equal(t, order.Party{Role: order.RoleDelivery, ID: "SHIP_TO_ID", VATID: "FR 66 951 632 874", Address: order.Address{
		Name: "SHIP_TO_NAME", Contact: "SHIP_TO_CONTACT_NAME", Street: "SHIP_TO_ADDR_1", Zip: "69003", City: "SHIP_TO_CITY",
		CountryCoded: "FR", Phone: "+33 6 85 96 32 41", Email: "delivery@buyer.com"}}, party(t, o, order.RoleDelivery))
	require.Equal(t, order.Party{Role: order.RoleInvoice, ID: "INVOICEE_ID_9587456", VATID: "FR 05 987 654 321", Address: order.Address{
		Name: "INVOICEE_NAME", Street: "INVOICEE_ADDR_1", Zip: "69001", City: "INVOICEE_CITY",
		CountryCoded: "FR", Email: "invoicee@buyer.com"}}, party(t, o, order.RoleInvoice))
	want := []order.Item{
		{Position: "1", SupplierArticleID: "987654321", BuyerArticleID: "654987321", EAN: "1234567890123", Description: "Product Name - Product Description",
			Quantity: "6.00", Unit: "PCE", UnitPrice: "10.00", PriceBasisQuantity: "1.00", LineAmount: "60.00", TaxRate: "20.00", DeliveryDate: date(2020, 4, 15)},
		{Position: "2", SupplierArticleID: "598632147", BuyerArticleID: "698569856", EAN: "548796523", Description: "Product Name - Product Description",
			Quantity: "10.00", Unit: "PCE", UnitPrice: "20.00", PriceBasisQuantity: "2.00", LineAmount: "100.00", TaxRate: "20.00", DeliveryDate: date(2020, 4, 15)},
		{Position: "3", SupplierArticleID: "698325417", BuyerArticleID: "598674321", EAN: "854721548", Description: "Product Name - Product Description",
			Quantity: "6.00", Unit: "PCE", UnitPrice: "25.00", PriceBasisQuantity: "1.00", LineAmount: "150.00", TaxRate: "20.00", DeliveryDate: date(2020, 4, 15)},
	}
	require.Equal(t, want, o.Items)
	require.Equal(t, order.Totals{NetAmount: "300.00", TaxAmount: "60.00", GrossAmount: "360.00",
		LinesAmount: "310.00", Charges: "21.00", Allowances: "31.00"}, o.Totals)
	validateOpenTrans(t, o)
}

// TestDeployTemplatesRejectOthers: invoices and the other buyer's orders are
// rejected by each order template with the reason DESIGN.md gives.
func TestDeployTemplatesRejectOthers(t *testing.T) {
	t.Parallel()
	set := deployTemplates(t)
	shared := templatetest.SharedDir(t)
	cases := []struct {
		file    string
		partyID string
		reason  document.Reason
	}{
		{"other/facturx-invoice-en16931.pdf", "CONTOSO", document.ReasonNotAnOrder},
		{"other/mustang-en16931-einfach.pdf", "CONTOSO", document.ReasonNotAnOrder},
		{"other/mustang-facture-f20180027.pdf", "CONTOSO", document.ReasonNotAnOrder},
		{"other/mustang-invoice-103767.pdf", "CONTOSO", document.ReasonNotAnOrder},
		{"other/mustang-rechnung-20170509-505.pdf", "CONTOSO", document.ReasonNotAnOrder},
		{"other/facturx-invoice-en16931.pdf", "ORDERX", document.ReasonNotAnOrder},
		{"other/mustang-en16931-einfach.pdf", "ORDERX", document.ReasonNotAnOrder},
		{"other/mustang-facture-f20180027.pdf", "ORDERX", document.ReasonNotAnOrder},
		{"other/mustang-invoice-103767.pdf", "ORDERX", document.ReasonNotAnOrder},
		{"other/mustang-rechnung-20170509-505.pdf", "ORDERX", document.ReasonNotAnOrder},
		{"orders/orderx-ex01-order-comfort.pdf", "CONTOSO", document.ReasonUnknownFormat},
		{"orders/contoso-po-Adatum-Adel.pdf", "ORDERX", document.ReasonUnknownFormat},
	}
	for _, c := range cases {
		t.Run(c.partyID+"/"+filepath.Base(c.file), func(t *testing.T) {
			t.Parallel()
			text := templatetest.PDFText(t, filepath.Join(shared, "corpus", c.file))
			run, err := set.Run(context.Background(), text, template.RunOptions{PartyID: c.partyID})
			require.NoError(t, err)
			require.Equal(t, template.OutcomeRejected, run.Outcome.Status, run.Outcome.String())
			require.Equal(t, c.reason, run.Outcome.Reason, run.Outcome.String())
		})
	}
	// Chosen by keywords, no template takes an invoice.
	for _, f := range []string{"facturx-invoice-en16931.pdf", "mustang-invoice-103767.pdf"} {
		tpl, _ := set.Match(templatetest.PDFText(t, filepath.Join(shared, "corpus", "other", f)))
		require.Nil(t, tpl, f)
	}
}
