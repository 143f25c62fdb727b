package draft_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/draft"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// A draft from a sample the generic reader proves freezes the reader's
// reading and reads the sample back as the reader did: each Contoso order's
// own draft reads its order number, date, items and (first order) totals
// as printed on it.
func TestDraftFromProvenContosoReadsItBack(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(templatetest.SharedDir(t), "corpus", "orders")
	for k, w := range contosoOrders {
		t.Run(w.file, func(t *testing.T) {
			s := sample(t, filepath.Join(dir, w.file))
			d, err := draft.Build(t.Context(), []draft.Sample{s}, draft.Options{})
			require.NoError(t, err)
			require.True(t, d.ReadsBack(), report(t, d))
			require.Contains(t, report(t, d), "read back: "+w.file+" as the generic reader read it")
			o, out := readWith(t, d, s)
			require.Equal(t, template.OutcomeSuccess, out.Status, out.Detail)
			requireContoso(t, w.file, o)
			require.Equal(t, "USD", o.Currency, "$6,547.55")
			if k == 0 {
				// SUBTOTAL 5,760.00, TAX 512.64, SHIP/INS 250.91 and
				// HANDLING 24 (charges after tax), TOTAL $6,547.55.
				require.Equal(t, order.Totals{NetAmount: "5760.00", TaxAmount: "512.64", ExtraCharges: "274.91", GrossAmount: "6547.55"}, o.Totals)
			}
		})
	}
}

// genItem is an item row as printed: quantity, unit price, price basis
// ("" for none), line amount ("" when the layout prints none).
type genItem struct{ qty, price, basis, amount string }

// generatedLayouts are the first pages of orders drawn by services/pogen
// (seeds 27, 52, 87, 100), as pdftotext -layout prints them; the values are
// read off the pages. other rewrites the order number and date for another
// order of the same buyer.
var generatedLayouts = []struct {
	file, id            string
	date, delivery      order.Date
	currency            string
	totals              order.Totals
	items               []genItem
	other               []string
	otherID             string
	otherDate           order.Date
	keywords, notValues []string
}{
	{
		// Italian: the order number under its label, glued units ("2m"),
		// a price per 100 ("3,00000/100"), prices without amounts.
		file: "po-27.txt", id: "ZY-21-0581", date: order.Date{Year: 2021, Month: 2, Day: 6}, delivery: order.Date{Year: 2021, Month: 3, Day: 17},
		currency: "EUR", totals: order.Totals{GrossAmount: "16005.50"},
		items: []genItem{{"2500", "3.00000", "100", ""}, {"4", "43.14000", "", ""}, {"2", "3.66497", "", ""}, {"48", "14.95000", "", ""},
			{"10", "21.29000", "", ""}, {"8", "72.52000", "", ""}, {"25", "12.70000", "", ""}, {"50", "7.66000", "", ""},
			{"100", "4.51000", "", ""}, {"10", "13.57014", "", ""}, {"36", "17.42000", "", ""}, {"1", "1.25000", "", ""}, {"100", "123.24377", "", ""}},
		other:   []string{"ZY-21-0581", "ZY-21-0977", "Data documento:         06/02/2021", "Data documento:         23/11/2021"},
		otherID: "ZY-21-0977", otherDate: order.Date{Year: 2021, Month: 11, Day: 23},
		notValues: []string{"ZY-21-0581", "06/02/2021", "16.005,50", "Imballaggi Bianchi S.p.A."},
	},
	{
		// US: "Label - value", descriptions above and below the numbers,
		// schedule sub-rows, a two-line column header, no totals printed.
		file: "po-52.txt", id: "113704", date: order.Date{Year: 2019, Month: 10, Day: 5}, delivery: order.Date{Year: 2019, Month: 12, Day: 26},
		currency: "USD",
		items: []genItem{{"5000", "0.16", "", "800.00"}, {"100", "9.12", "", "912.00"}, {"36", "5.01", "", "180.36"},
			{"1000", "13.69", "", "13690.00"}, {"10", "7.40", "", "74.00"}, {"4", "24.31", "", "97.24"}, {"500", "9.06", "", "4530.00"}},
		other:   []string{"Purchase Order No. - 113704", "Purchase Order No. - 9000417", "Order Date - 10/05/2019", "Order Date - 01/31/2020"},
		otherID: "9000417", otherDate: order.Date{Year: 2020, Month: 1, Day: 31},
		notValues: []string{"113704", "10/05/2019", "12/26/2019", "Summit Industrial Products"},
	},
	{
		// Indian: the order number two lines under its label, amounts
		// glued to "Rs.", a price basis column, IGST, a total quantity.
		file: "po-87.txt", id: "HR/PUR/24-25/04/041334", date: order.Date{Year: 2024, Month: 4, Day: 11}, delivery: order.Date{Year: 2024, Month: 5, Day: 29},
		currency: "INR", totals: order.Totals{NetAmount: "54171.05", TaxAmount: "6500.53", GrossAmount: "60671.58", Quantity: "15.000"},
		items:   []genItem{{"10.000", "3850.56", "1", "38505.60"}, {"5.000", "3133.09", "1", "15665.45"}},
		other:   []string{"HR/PUR/24-25/04/041334", "HR/PUR/24-25/07/052001", "Order Date:       11/04/2024", "Order Date:       15/07/2024"},
		otherID: "HR/PUR/24-25/07/052001", otherDate: order.Date{Year: 2024, Month: 7, Day: 15},
		notValues: []string{"HR/PUR/24-25/04/041334", "11/04/2024", "Rs.60,671.58", "Bharat Polymers Pvt. Ltd."},
	},
	{
		// The order number right of the title, dates as 13/Jan/26.
		file: "po-100.txt", id: "138993", date: order.Date{Year: 2026, Month: 1, Day: 13}, delivery: order.Date{Year: 2026, Month: 3, Day: 13},
		currency: "USD", totals: order.Totals{GrossAmount: "15580.67"},
		items: []genItem{{"24", "10.60", "", "254.40"}, {"1", "1670.26", "", "1670.26"}, {"20", "322.17", "", "6443.40"}, {"240", "10.30", "", "2472.00"},
			{"1", "1.41", "", "1.41"}, {"480", "9.29", "", "4459.20"}, {"2000", "0.14", "", "280.00"}},
		other:   []string{"138993", "140017", "13/Jan/26", "02/Feb/26"},
		otherID: "140017", otherDate: order.Date{Year: 2026, Month: 2, Day: 2},
		notValues: []string{"138993", "13/Jan/26", "15,580.67", "Redwood Electrical Distributors"},
	},
}

// Drafts from generated layouts of buyers the drafter has never seen read
// their samples back as the reader did, with the values printed on them,
// and read another order of the buyer (another number and date) unchanged.
// No keyword is a value printed on the sample.
func TestDraftFromProvenGeneratedLayouts(t *testing.T) {
	t.Parallel()
	for _, c := range generatedLayouts {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "generated", c.file))
			require.NoError(t, err)
			text := string(b)
			d := build(t, text)
			require.True(t, d.ReadsBack(), report(t, d))
			o := read(t, d, text)
			require.Equal(t, c.id, o.ID)
			require.Equal(t, c.date, o.IssueDate)
			require.Equal(t, c.delivery, o.DeliveryDate)
			require.Equal(t, c.currency, o.Currency)
			require.Equal(t, c.totals, o.Totals)
			var got []genItem
			for _, it := range o.Items {
				got = append(got, genItem{it.Quantity, it.UnitPrice, it.PriceBasisQuantity, it.LineAmount})
			}
			require.Equal(t, c.items, got)
			requireNoValueKeyword(t, d, c.notValues)

			o = read(t, d, strings.NewReplacer(c.other...).Replace(text))
			require.Equal(t, c.otherID, o.ID)
			require.Equal(t, c.otherDate, o.IssueDate)
			require.Len(t, o.Items, len(c.items))
		})
	}
}

func requireNoValueKeyword(t *testing.T, d *draft.Draft, values []string) {
	t.Helper()
	require.NotEmpty(t, d.Template.Keywords)
	for _, k := range sources(d.Template.Keywords) {
		re := regexp.MustCompile(k)
		for _, v := range values {
			require.False(t, re.MatchString(v), "keyword %q matches the value %q", k, v)
		}
	}
}

// hansenOrder prints its order number in the title's cell.
const hansenOrder = `Hansen Werkzeugbau GmbH                                    BESTELLUNG Nr. 4500012345
Am Hafen 12, 20457 Hamburg
                                                           Datum: 12.03.2024
Lieferant:
Schrauben Schmidt KG
Hafenweg 12
28197 Bremen

Pos  Artikel      Bezeichnung                      Menge  ME     Einzelpreis     Gesamtpreis
1    4711-A       Sechskantschraube M10              100  Stk           1,25          125,00
2    4712-B       Mutter M10 verzinkt              1.000  Stk           1,10        1.100,00

                                                         Nettobetrag                1.225,00
                                                         MwSt. 19 %                   232,75
                                                         Gesamtbetrag               1.457,75
`

// The keywords are the letterhead and the labels the reader read the order
// number and date under — the title without the number it prints — so the
// draft reads the buyer's next order, with another number, date, supplier
// and amounts.
func TestDraftKeywordsAreLayoutNotValues(t *testing.T) {
	t.Parallel()
	d := build(t, hansenOrder)
	require.True(t, d.ReadsBack(), report(t, d))
	require.Equal(t, []string{`\bHansen\s+Werkzeugbau\s+GmbH\b`, `\bBESTELLUNG\s+Nr\.`, `\bDatum:`}, sources(d.Template.Keywords))
	requireNoValueKeyword(t, d, []string{"4500012345", "12.03.2024", "1.457,75", "Schrauben Schmidt KG", "Sechskantschraube M10"})

	next := strings.NewReplacer("4500012345", "4500012999", "12.03.2024", "02.05.2024", "Schrauben Schmidt KG", "Muttern Maier GmbH",
		"  100  Stk           1,25          125,00", "  200  Stk           1,25          250,00",
		"1.225,00", "1.350,00", "232,75", "256,50", "1.457,75", "1.606,50").Replace(hansenOrder)
	o := read(t, d, next)
	require.Equal(t, "4500012999", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 5, Day: 2}, o.IssueDate)
	require.Equal(t, "Muttern Maier GmbH", party(o, order.RoleSupplier).Address.Name)
	require.Equal(t, order.Totals{NetAmount: "1350.00", TaxAmount: "256.50", GrossAmount: "1606.50"}, o.Totals)
	require.Equal(t, []item{{"4711-A", "Sechskantschraube M10", "200", "Stk", "1.25", "250.00"},
		{"4712-B", "Mutter M10 verzinkt", "1000", "Stk", "1.10", "1100.00"}}, items(o))
}
