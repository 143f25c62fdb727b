package draft_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/draft"
)

// Layouts written for these tests (not from the corpus): each convention the
// drafter must handle, with the values printed on the page as expectations.

// English, US: labels with a colon on the same line, party blocks below
// their labels, an ambiguous date with dollar amounts, comma grouping, a
// wrapped description, a unit column.
const usOrder = `ACME Manufacturing Corp.                                  PURCHASE ORDER
1200 Main Street, Springfield, IL 62701
                                                          PO No.: 4500-1234
                                                          Order Date: 03/04/2024
Vendor:                                   Ship To:
Bolt & Nut Supply Co.                     ACME Plant 2
55 Industrial Rd, Peoria, IL 61602        800 River Rd, Springfield, IL 62702

Payment Terms: Net 30

Item       Description                         Qty   UOM     Unit Price       Amount
A-1001     Hex bolt M8 x 40 zinc plated      1,200   EA            0.12       144.00
B-2002     Washer 8.4 mm DIN 125               500   EA            0.04        20.00
C-3003     Hydraulic hose DN10 with fittings,    2   EA          625.50     1,251.00
           length 1500 mm
D-4004     O-ring 25x3                          10   EA            1.00        10.00

                                                             Subtotal        1,425.00
                                                             Tax 8%            114.00
                                                             Total          $1,539.00
`

// German: values below their labels, decimal comma with dot grouping,
// columns left of the description (position, quantity, unit, article).
const deOrder = `Müller Maschinenbau GmbH                                   Bestellung
Industriestraße 4, 70565 Stuttgart

Bestell-Nr.         Datum          Liefertermin       Währung
B-778812            12.03.2024     02.04.2024         EUR

Lieferant                                Lieferanschrift
Schrauben Schmidt KG                     Müller Maschinenbau GmbH
Einkauf Süd                              Tor 3
Hafenweg 12                              Industriestraße 4
28197 Bremen                             70565 Stuttgart
Tel. +49 421 555 0100

Pos  Menge  ME    Artikel      Bezeichnung                         Einzelpreis   Gesamtpreis
1      100  Stk   4711-A       Sechskantschraube M10                      1,25        125,00
2    1.000  Stk   4712-B       Mutter M10 verzinkt                        1,10      1.100,00

                                                        Nettobetrag             1.225,00
                                                        MwSt. 19 %                232,75
                                                        Gesamtbetrag            1.457,75
Zahlungsbedingungen: 30 Tage netto
`

// French: space grouping, a textual date, a euro sign after the amounts.
const frOrder = `SOCIETE LEBLANC SARL                                  BON DE COMMANDE
N° de commande : CMD-0042
Date : 7 mai 2024
Devise : EUR

Réf.      Désignation                      Qté    Prix unitaire      Montant
R-001     Gants nitrile taille 9          1 000            0,45       450,00
R-002     Carton double cannelure            20           12,30       246,00
R-003     Palette bois 1200x800               2          500,00     1 000,00

                                      Total HT : 1 696,00 €
                                      TVA 20 % : 339,20 €
                                     Total TTC : 2 035,20 €
`

func build(t *testing.T, texts ...string) *draft.Draft {
	t.Helper()
	var ss []draft.Sample
	for i, tx := range texts {
		ss = append(ss, draft.Sample{Name: string(rune('a'+i)) + ".pdf", Text: tx})
	}
	d, err := draft.Build(t.Context(), ss, draft.Options{})
	require.NoError(t, err)
	tpl, err := template.Parse("x.yml", d.YAML)
	require.NoError(t, err)
	require.Empty(t, tpl.Problems)
	return d
}

func read(t *testing.T, d *draft.Draft, text string) *order.Order {
	t.Helper()
	o, out := readOutcome(t, d, text)
	require.Equal(t, template.OutcomeSuccess, out.Status, out.Detail)
	return o
}

// readOutcome reads text with the draft whatever the outcome: a layout whose
// rows the draft cannot fully read is rejected by the arithmetic checks.
func readOutcome(t *testing.T, d *draft.Draft, text string) (*order.Order, *template.Outcome) {
	t.Helper()
	res, err := d.Template.Extract(t.Context(), text, nil)
	require.NoError(t, err)
	o, out, err := d.Template.Order(t.Context(), res, nil, "", nil)
	require.NoError(t, err)
	require.NotNil(t, o)
	return o, out
}

// requireLineCheckRejects asserts the outcome is the line_amount check's
// rejection naming the row the draft could not read fully.
func requireLineCheckRejects(t *testing.T, out *template.Outcome, row string) {
	t.Helper()
	require.Equal(t, template.OutcomeRejected, out.Status)
	require.Equal(t, "cannot_parse_items", out.Reason.WireValue())
	require.Contains(t, out.Detail, "line_amount")
	require.Contains(t, out.Detail, row)
}

type item struct{ article, desc, qty, unit, price, amount string }

func items(o *order.Order) []item {
	var out []item
	for _, it := range o.Items {
		out = append(out, item{it.SupplierArticleID, strings.Join(strings.Fields(it.Description), " "), it.Quantity, it.Unit, it.UnitPrice, it.LineAmount})
	}
	return out
}

func report(t *testing.T, d *draft.Draft) string {
	var b bytes.Buffer
	require.NoError(t, d.WriteReport(&b))
	return b.String()
}

func TestDraftUSLayout(t *testing.T) {
	t.Parallel()
	d := build(t, usOrder)
	o := read(t, d, usOrder)
	require.Equal(t, "4500-1234", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 3, Day: 4}, o.IssueDate, "03/04/2024 with dollar amounts is a US date")
	require.Equal(t, "USD", o.Currency)
	require.Equal(t, "Net 30", o.PaymentTerms)
	require.Equal(t, order.Address{Name: "Bolt & Nut Supply Co.", Street: "55 Industrial Rd", City: "Peoria", State: "IL", Zip: "61602"},
		party(o, order.RoleSupplier).Address)
	require.Equal(t, order.Address{Name: "ACME Plant 2", Street: "800 River Rd", City: "Springfield", State: "IL", Zip: "62702"},
		party(o, order.RoleDelivery).Address)
	require.Equal(t, order.Totals{NetAmount: "1425.00", TaxAmount: "114.00", GrossAmount: "1539.00"}, o.Totals)
	require.Equal(t, []item{
		{"A-1001", "Hex bolt M8 x 40 zinc plated", "1200", "EA", "0.12", "144.00"},
		{"B-2002", "Washer 8.4 mm DIN 125", "500", "EA", "0.04", "20.00"},
		{"C-3003", "Hydraulic hose DN10 with fittings, length 1500 mm", "2", "EA", "625.50", "1251.00"},
		{"D-4004", "O-ring 25x3", "10", "EA", "1.00", "10.00"},
	}, items(o))
	r := report(t, d)
	require.Contains(t, r, `order_id        found   label "PO No.:", value same line (generic reader): "4500-1234"`)
	require.Contains(t, r, `dates: %m/%d/%Y — as the generic reader read the order date; every date is ambiguous`)
	require.Contains(t, r, `wrapped descriptions: 1 continuation lines`)
	require.Contains(t, r, `column "UOM" → unit`)

	// Another order of the same buyer: other values, lengths, letters in
	// the order number, more digits.
	other := strings.NewReplacer("4500-1234", "PO-98765X", "03/04/2024", "12/24/2024", "1,200", "12,000", "144.00", "1,440.00",
		"1,425.00", "2,721.00", "114.00", "217.68", "$1,539.00", "$2,938.68").Replace(usOrder)
	o = read(t, d, other)
	require.Equal(t, "PO-98765X", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 12, Day: 24}, o.IssueDate)
	require.Equal(t, "12000", o.Items[0].Quantity)
	require.Equal(t, "2938.68", o.Totals.GrossAmount)
}

func TestDraftGermanLayoutValuesBelowLabels(t *testing.T) {
	t.Parallel()
	d := build(t, deOrder)
	o := read(t, d, deOrder)
	require.Equal(t, "B-778812", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 3, Day: 12}, o.IssueDate)
	require.Equal(t, order.Date{Year: 2024, Month: 4, Day: 2}, o.DeliveryDate)
	require.Equal(t, "EUR", o.Currency)
	require.Equal(t, "30 Tage netto", o.PaymentTerms)
	require.Equal(t, order.Address{Name: "Schrauben Schmidt KG", Name2: "Einkauf Süd", Street: "Hafenweg 12", Zip: "28197", City: "Bremen",
		Phone: "+49 421 555 0100"}, party(o, order.RoleSupplier).Address)
	require.Equal(t, order.Address{Name: "Müller Maschinenbau GmbH", Name2: "Tor 3", Street: "Industriestraße 4", Zip: "70565", City: "Stuttgart"},
		party(o, order.RoleDelivery).Address)
	require.Equal(t, order.Totals{NetAmount: "1225.00", TaxAmount: "232.75", GrossAmount: "1457.75"}, o.Totals)
	require.Equal(t, []item{
		{"4711-A", "Sechskantschraube M10", "100", "Stk", "1.25", "125.00"},
		{"4712-B", "Mutter M10 verzinkt", "1000", "Stk", "1.10", "1100.00"},
	}, items(o))
	require.Equal(t, []string{"1", "2"}, []string{o.Items[0].Position, o.Items[1].Position})
	r := report(t, d)
	require.Contains(t, r, `order_id        found   label "Bestell-Nr.", value below (generic reader): "B-778812"`)
	require.Contains(t, r, `numbers: decimal separator ","`)
	require.Contains(t, r, `thousands grouped with "."`)
	require.Contains(t, r, `dates: %d.%m.%Y`)
}

func TestDraftFrenchLayoutSpaceGroupingTextualDate(t *testing.T) {
	t.Parallel()
	d := build(t, frOrder)
	o := read(t, d, frOrder)
	require.Equal(t, "CMD-0042", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 5, Day: 7}, o.IssueDate)
	require.Equal(t, "EUR", o.Currency)
	require.Equal(t, order.Totals{NetAmount: "1696.00", TaxAmount: "339.20", GrossAmount: "2035.20"}, o.Totals)
	require.Equal(t, []item{
		{"R-001", "Gants nitrile taille 9", "1000", "", "0.45", "450.00"},
		{"R-002", "Carton double cannelure", "20", "", "12.30", "246.00"},
		{"R-003", "Palette bois 1200x800", "2", "", "500.00", "1000.00"},
	}, items(o))
	require.Contains(t, report(t, d), `thousands grouped with " "`)
	require.Contains(t, string(d.YAML), `decimal_separator: ','`)
}

// With several samples, what differs is a value: keywords hold only text
// all samples print, and a label printed on one sample only is not drafted.
func TestDraftSeveralSamplesGeneralise(t *testing.T) {
	t.Parallel()
	second := strings.NewReplacer("B-778812", "C-1", "12.03.2024", "28.11.2024", "02.04.2024", "15.12.2024",
		"Zahlungsbedingungen: 30 Tage netto", "").Replace(deOrder)
	d := build(t, deOrder, second)
	for _, k := range d.Template.Keywords {
		require.NotContains(t, k.Source, "778812")
	}
	require.Equal(t, []string{`\bMüller\s+Maschinenbau\s+GmbH\b`, `\bBestellung\b`, `\bBestell-Nr\.`}, sources(d.Template.Keywords))
	o := read(t, d, second)
	require.Equal(t, "C-1", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 11, Day: 28}, o.IssueDate)
	require.Empty(t, o.PaymentTerms)
	require.Contains(t, report(t, d), "payment_terms   missing (label \"Zahlungsbedingungen\" of a.pdf not found in b.pdf)")
	require.Len(t, d.Outcomes, 2)
}

// A document of another buyer (or an invoice) is not read by the draft.
func TestDraftRejectsOtherLayouts(t *testing.T) {
	t.Parallel()
	d := build(t, deOrder)
	res, err := d.Template.Extract(t.Context(), frOrder, nil)
	require.NoError(t, err)
	require.False(t, res.Matched)
	_, out, err := d.Template.Order(t.Context(), res, nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeRejected, out.Status)

	res, err = d.Template.Extract(t.Context(), strings.Replace(deOrder, "Bestellung", "Bestellung   Rechnung Nr. 77", 1), nil)
	require.NoError(t, err)
	_, out, err = d.Template.Order(t.Context(), res, nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, template.OutcomeRejected, out.Status, "an invoice is not an order")

	// A remark about invoices in an order does not reject it.
	read(t, d, deOrder+"Bitte geben Sie unsere Bestellnummer auf der Rechnung an.\nRechnungsadresse: wie oben\n")
}

func TestDraftNoSample(t *testing.T) {
	t.Parallel()
	_, err := draft.Build(t.Context(), nil, draft.Options{})
	require.ErrorIs(t, err, draft.ErrNoSample)
	_, err = draft.Build(t.Context(), []draft.Sample{{Name: "scan.pdf", Text: "\f\n"}}, draft.Options{})
	require.ErrorIs(t, err, draft.ErrNoSample)
	require.ErrorContains(t, err, "scan.pdf")
}

// A layout without labels or table still gives a template that loads (a
// start for the author), with the misses in the report.
func TestDraftNothingFound(t *testing.T) {
	t.Parallel()
	d := build(t, "Dear supplier,\nplease send us the usual.\n")
	require.Len(t, d.Template.Keywords, 1)
	r := report(t, d)
	require.Contains(t, r, "order_id        missing (no label found)")
	require.Contains(t, r, "item table:\n  not found")
}

func sources(rs []*template.Regex) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Source
	}
	return out
}

func party(o *order.Order, r order.Role) order.Party {
	p, _ := o.Party(r)
	return p
}

// rabattOrder has rows with empty cells (no unit; no unit and no
// description) and a discount column (Rabatt): 10 × 1,00 less 10 % = 9,00.
const rabattOrder = `Acme Handel GmbH                                Bestellung
                                                Bestellnummer: 4711
                                                Datum: 03.02.2025
Pos  Menge  ME    Bezeichnung                   Preis   Rabatt     Betrag
1       10  Stk   Schraube M8                    1,00       10       9,00
2        5        Mutter M8                      2,00        0      10,00
3        4  Stk   Scheibe 8,4                    1,50        0       6,00
4        2                                       3,00        0       6,00
                                                 Gesamtbetrag       31,00
`

// The generic reader proves the order (it knows the discount column), so
// the draft reads every row with the discount: rows of another shape get
// patterns of their own.
func TestDraftReadsRowsTheReaderReads(t *testing.T) {
	t.Parallel()
	d := build(t, rabattOrder)
	require.True(t, d.ReadsBack(), report(t, d))
	o := read(t, d, rabattOrder)
	require.Equal(t, []item{{"", "Schraube M8", "10", "Stk", "1.00", "9.00"}, {"", "Mutter M8", "5", "", "2.00", "10.00"},
		{"", "Scheibe 8,4", "4", "Stk", "1.50", "6.00"}, {"", "", "2", "", "3.00", "6.00"}}, items(o))
	require.Equal(t, "10", o.Items[0].DiscountPercent)
	require.Equal(t, "31.00", o.Totals.GrossAmount)
	r := report(t, d)
	require.Contains(t, r, `column "Rabatt" → discount_percent`)
	require.Contains(t, r, "read back: a.pdf as the generic reader read it (order id, dates, currency, totals, 4 items)")
}

// Rows with an empty cell get a pattern of their own; what the draft cannot
// read is in the report: a row with two empty cells and line amounts that
// are not quantity × price (a discount column it does not know). The total
// printed is not the rows' sum, so the generic reader does not prove the
// order and the draft is made from labels and column headings.
func TestDraftReportsWhatItCannotRead(t *testing.T) {
	t.Parallel()
	text := strings.Replace(rabattOrder, "Gesamtbetrag       31,00", "Gesamtbetrag       32,00", 1)
	d := build(t, text)
	require.False(t, d.ReadsBack())
	r := report(t, d)
	require.Contains(t, r, `1 rows with an empty "ME" cell, read by a pattern of their own`)
	require.Contains(t, r, `NOT READ: line 8 "4        2                                       3,00        0       6,00"`)
	require.Contains(t, r, "CHECK: on 1 of 2 rows the line amount is not quantity × price ÷ price basis")
	require.Contains(t, r, `column "Rabatt" → (not kept)`)
	require.Regexp(t, `reading: the generic reader does not prove a\.pdf \(.*32\.00.*\); drafted from labels and column headings instead`, r)
	// The discount column is not read, so the checks refuse the order
	// rather than deliver 10 × 1.00 as 9.00 silently.
	o, out := readOutcome(t, d, text)
	requireLineCheckRejects(t, out, "Schraube M8")
	require.Equal(t, []item{{"", "Schraube M8", "10", "Stk", "1.00", "9.00"}, {"", "Mutter M8", "5", "", "2.00", "10.00"},
		{"", "Scheibe 8,4", "4", "Stk", "1.50", "6.00"}}, items(o))
}

// A total printed on every page with a running value: the last one is the
// order's; the draft says so with group: last.
func TestDraftTotalsRepeatedPerPage(t *testing.T) {
	t.Parallel()
	text := `Acme Handel GmbH                                Bestellung
Bestellnummer: 4711
Datum: 03.02.2025
Pos  Menge  ME    Bezeichnung                   Preis      Betrag
1       10  Stk   Schraube M8                    1,00       10,00
                                                 Summe      10,00
` + "\f" + `Acme Handel GmbH                                Bestellung
Bestellnummer: 4711
Datum: 03.02.2025
Pos  Menge  ME    Bezeichnung                   Preis      Betrag
2        4  Stk   Scheibe 8,4                    1,50        6,00
                                                 Summe      16,00
`
	d := build(t, text)
	require.Contains(t, string(d.YAML), "group: last")
	o := read(t, d, text)
	require.Equal(t, "16.00", o.Totals.GrossAmount)
	require.Equal(t, "4711", o.ID)
	require.Len(t, o.Items, 2)
}

// Prices printed with a currency sign or code in the cells.
func TestDraftCurrencyInCells(t *testing.T) {
	t.Parallel()
	text := `Globex Corporation                                  PURCHASE ORDER
PO Number: 88-1200
Date: 2024-06-30

Item      Description                 Qty      Unit Price        Amount
G-1       Widget, large                 3        $ 12.50        $ 37.50
G-2       Widget, small                10         $ 2.00        $ 20.00
                                                  Total          $57.50
`
	d := build(t, text)
	o := read(t, d, text)
	require.Equal(t, order.Date{Year: 2024, Month: 6, Day: 30}, o.IssueDate)
	require.Equal(t, []item{{"G-1", "Widget, large", "3", "", "12.50", "37.50"}, {"G-2", "Widget, small", "10", "", "2.00", "20.00"}}, items(o))
	require.Equal(t, "57.50", o.Totals.GrossAmount)
	require.Equal(t, "USD", o.Currency)
}

// An SAP-style German order: labels left of values in the header's right
// column, a vendor block with street and postcode, a delivery date per row,
// a wrapped short text, a price basis printed under its row (which the
// draft cannot read — the report says CHECK) and a net total labelled
// "ohne MwSt." (without VAT: not the tax amount).
const sapOrder = `Stadtwerke Musterstadt GmbH
Postfach 12 34, 12345 Musterstadt
                                                   Bestellung
Lieferant                                          Bestellnummer      4500123456
Metallbau Krause GmbH                              Datum              05.02.2025
Gewerbering 7                                      Ansprechpartner    Frau Meier
34567 Anderstadt                                   Telefon            0123 4567-89

Pos.  Material      Kurztext                          Menge  ME   Lieferdatum      Preis/ME     Nettowert
00010 100-2001      Flachstahl S235 40x5                120  M    20.02.2025         3,45        414,00
00020 100-2002      Winkelstahl S235 50x50x5             60  M    20.02.2025         7,80        468,00
                    gebeizt und geölt
00030 200-1500      Schrauben M10x30 8.8 verzinkt     1.000  ST   27.02.2025        12,50        125,00
                                                                          Preisbasis 100 ST

                                                     Gesamtwert ohne MwSt. EUR     1.007,00
                                                       Gesamtwert inkl. MwSt. EUR     1.198,33
Zahlungsbedingungen: 30 Tage ohne Abzug
`

func TestDraftSAPStyleLayout(t *testing.T) {
	t.Parallel()
	d := build(t, sapOrder)
	// The price basis printed under row 30 ("Preisbasis 100 ST") is not
	// drafted: the line check refuses the order instead of a wrong amount.
	o, out := readOutcome(t, d, sapOrder)
	requireLineCheckRejects(t, out, "200-1500")
	require.Equal(t, "4500123456", o.ID)
	require.Equal(t, order.Date{Year: 2025, Month: 2, Day: 5}, o.IssueDate)
	require.Equal(t, order.Totals{NetAmount: "1007.00", GrossAmount: "1198.33"}, o.Totals)
	require.Equal(t, "30 Tage ohne Abzug", o.PaymentTerms)
	require.Equal(t, order.Address{Name: "Metallbau Krause GmbH", Street: "Gewerbering 7", Zip: "34567", City: "Anderstadt"}, party(o, order.RoleSupplier).Address)
	require.Equal(t, []item{
		{"100-2001", "Flachstahl S235 40x5", "120", "M", "3.45", "414.00"},
		{"100-2002", "Winkelstahl S235 50x50x5 gebeizt und geölt", "60", "M", "7.80", "468.00"},
		{"200-1500", "Schrauben M10x30 8.8 verzinkt", "1000", "ST", "12.50", "125.00"},
	}, items(o))
	require.Equal(t, "00020", o.Items[1].Position)
	require.Equal(t, order.Date{Year: 2025, Month: 2, Day: 27}, o.Items[2].DeliveryDate)
	r := report(t, d)
	require.Contains(t, r, "CHECK: on 1 of 3 rows")
	require.Contains(t, r, `total_net       found   label "ohne MwSt."`)
	require.Contains(t, r, `total_gross     found   label "inkl. MwSt."`)
}

// A small US layout: the title first, the buyer's name under it, "Rate" for
// the price, a free-text row (shipping) among the articles.
const qbOrder = `Purchase Order
Fabrikam Residences                               Date: 05/14/2024
123 Elm St                                        P.O. No.: 1045
Seattle, WA 98101

Vendor                          Ship To
Northwind Traders               Fabrikam Residences
55 Pine Rd                      123 Elm St
Tacoma, WA 98402                Seattle, WA 98101

Item            Description                     Qty        Rate        Amount
Lumber-2x4      2x4 stud 8 ft                   120        3.25        390.00
Nails-16d       Framing nails 16d, 50 lb box      2       89.99        179.98
Shipping        Delivery charge                   1       45.00         45.00

                                                          Total       $614.98
`

func TestDraftTitleFirstLayout(t *testing.T) {
	t.Parallel()
	d := build(t, qbOrder)
	require.Equal(t, "fabrikam-residences", d.Name)
	require.Equal(t, []string{`\bFabrikam\s+Residences\b`, `\bPurchase\s+Order\b`, `\bP\.O\.\s+No\.`}, sources(d.Template.Keywords))
	o := read(t, d, qbOrder)
	require.Equal(t, "1045", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 5, Day: 14}, o.IssueDate)
	require.Equal(t, "614.98", o.Totals.GrossAmount)
	require.Equal(t, order.Address{Name: "Northwind Traders", Street: "55 Pine Rd", City: "Tacoma", State: "WA", Zip: "98402"}, party(o, order.RoleSupplier).Address)
	require.Equal(t, order.Address{Name: "Fabrikam Residences", Street: "123 Elm St", City: "Seattle", State: "WA", Zip: "98101"}, party(o, order.RoleBuyer).Address)
	require.Equal(t, []item{
		{"Lumber-2x4", "2x4 stud 8 ft", "120", "", "3.25", "390.00"},
		{"Nails-16d", "Framing nails 16d, 50 lb box", "2", "", "89.99", "179.98"},
		{"Shipping", "Delivery charge", "1", "", "45.00", "45.00"},
	}, items(o))
}

// Leader dots between label and value vary in length from order to order.
func TestDraftLeaderDots(t *testing.T) {
	t.Parallel()
	text := `Initech LLC                                  Purchase Order
Order No. ........... 77-1
Order Date .......... 2024-09-01

Qty   Description                 Unit Price     Amount
  2   Stapler, red                     15.00      30.00
                                       Total      30.00
`
	d := build(t, text)
	o := read(t, d, strings.NewReplacer("........... 77-1", "...... 78-22", ".......... 2024-09-01", "....... 2024-10-02").Replace(text))
	require.Equal(t, "78-22", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 10, Day: 2}, o.IssueDate)
	require.Equal(t, []item{{"", "Stapler, red", "2", "", "15.00", "30.00"}}, items(o))
}

// With several samples the value patterns cover every sample's values: a
// longer unit in the second sample is read.
func TestDraftSeveralSamplesWidenValues(t *testing.T) {
	t.Parallel()
	second := strings.NewReplacer("100  Stk   4711-A", "100  Karton 4711-A", "B-778812", "B-9").Replace(deOrder)
	require.NotEqual(t, deOrder, second)
	one := build(t, deOrder)
	res, err := one.Template.Extract(t.Context(), second, nil)
	require.NoError(t, err)
	rows, _ := res.Fields.Get("lines")
	require.Len(t, rows, 1, "from the first sample alone, a six-letter unit is not a unit")

	both := build(t, deOrder, second)
	o := read(t, both, second)
	require.Equal(t, "Karton", o.Items[0].Unit)
	require.Len(t, o.Items, 2)
}
