package generic_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// po is a small English purchase order as pdftotext -layout prints one;
// the cases below change one thing each.
const po = `ACME Industries                                        PURCHASE ORDER
1 Main Street, Springfield                              PO Number:   4500012345
                                                        PO Date:     03/14/2024
                                                        Currency:    USD

Pos   Item       Description                  Qty      Unit Price        Amount
1     AB-100     Hex bolt M8x40               100           0.25          25.00
2     AB-200     Washer 8.4 mm                 20           1.50          30.00
                 zinc plated
                                                        Subtotal          55.00
                                                        Sales Tax 10%      5.50
                                                        Total             60.50
`

func readText(t *testing.T, text string) *generic.Result {
	t.Helper()
	res, err := generic.Read(context.Background(), text, generic.Options{Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestReadsASmallOrder(t *testing.T) {
	res := readText(t, po)
	if res.Outcome.Status != template.OutcomeSuccess {
		t.Fatalf("outcome %s", res.Outcome)
	}
	o := res.Order
	if o.ID != "4500012345" || o.IssueDate.String() != "2024-03-14" || o.Currency != "USD" {
		t.Errorf("header: %q %s %q", o.ID, o.IssueDate, o.Currency)
	}
	if o.Totals.NetAmount != "55.00" || o.Totals.TaxAmount != "5.50" || o.Totals.GrossAmount != "60.50" {
		t.Errorf("totals %+v", o.Totals)
	}
	if len(o.Items) != 2 || o.Items[1].Quantity != "20" || o.Items[1].UnitPrice != "1.50" || o.Items[1].LineAmount != "30.00" {
		t.Fatalf("items %+v", o.Items)
	}
	if !strings.Contains(o.Items[1].Description, "zinc plated") {
		t.Errorf("the continuation line is not in the description: %q", o.Items[1].Description)
	}
	var idAt *generic.Field
	for i, f := range res.Fields {
		if f.Name == "order_id" {
			idAt = &res.Fields[i]
		}
	}
	// "PO Number:" is on the second line (index 1); its value starts at column 69.
	if idAt == nil || idAt.At.Page != 1 || idAt.At.Line != 1 || idAt.At.Col != 69 || idAt.At.Label != "PO Number:" {
		t.Errorf("order id position %+v", idAt)
	}
	// The total 60.50 is printed on line index 11 from column 74, after "Total".
	i := slices.IndexFunc(res.Fields, func(f generic.Field) bool { return f.Name == "gross_total" })
	if i < 0 {
		t.Fatal("no gross_total field")
	}
	if f := res.Fields[i]; f.Value != "60.50" || f.At.Line != 11 || f.At.Col != 74 || f.At.Len != 5 || f.At.Label != "Total" {
		t.Errorf("gross total field %+v", f)
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name, old, new string
		reason         document.Reason
	}{
		{"two order ids", "PURCHASE ORDER", "PURCHASE ORDER   4500099999", document.ReasonDocumentIDMissing},
		{"no order id", "PO Number:   4500012345", "PO Number:", document.ReasonDocumentIDMissing},
		{"line does not close", "1.50          30.00", "1.50          31.00", document.ReasonCannotParseItems},
		{"total does not close", "Total             60.50", "Total             61.50", document.ReasonCannotParseItems},
		{"no quantities", "Qty", "   ", document.ReasonCannotParseItems},
		{"an invoice", "PURCHASE ORDER", "INVOICE", document.ReasonNotAnOrder},
		{"a German invoice", "PURCHASE ORDER", "RECHNUNG", document.ReasonNotAnOrder},
		{"a delivery note", "PURCHASE ORDER", "Lieferschein", document.ReasonNotAnOrder},
		{"a quotation", "PURCHASE ORDER", "QUOTATION", document.ReasonNotAnOrder},
		{"two currencies", "Currency:    USD", "Currency:    USD EUR", document.ReasonUnknownFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(po, c.old, c.new, 1)
			if text == po {
				t.Fatal("the case changes nothing")
			}
			res := readText(t, text)
			if res.Outcome.Status != template.OutcomeRejected || res.Outcome.Reason != c.reason {
				t.Errorf("outcome %s, want rejected %s", res.Outcome, c.reason)
			}
		})
	}
}

// TestConventions reads the same order in other languages and number and
// date conventions.
func TestConventions(t *testing.T) {
	de := strings.NewReplacer("PURCHASE ORDER", "BESTELLUNG    ", "PO Number:", "Bestell-Nr.:", "PO Date:  ", "Datum:    ",
		"03/14/2024", "14.03.2024", "Currency:", "Währung: ", "USD", "EUR", "Description", "Bezeichnung",
		"Qty", "Menge", "Unit Price", "Einzelpreis", "Amount", "Betrag", "Subtotal", "Nettobetrag", "Sales Tax 10%", "MwSt. 10 %   ",
		"Total   ", "Gesamtbetrag", "0.25", "0,25", "25.00", "25,00", "1.50", "1,50", "30.00", "30,00", "55.00", "55,00",
		"5.50", "5,50", "60.50", "60,50", "Washer 8.4 mm", "Washer 8,4 mm").Replace(po)
	res := readText(t, de)
	if res.Outcome.Status != template.OutcomeSuccess {
		t.Fatalf("outcome %s\n%s", res.Outcome, de)
	}
	if o := res.Order; o.ID != "4500012345" || o.IssueDate.String() != "2024-03-14" || o.Currency != "EUR" || o.Totals.GrossAmount != "60.50" {
		t.Errorf("read %q %s %q %+v", o.ID, o.IssueDate, o.Currency, o.Totals)
	}
}

// TestPartiesSideBySide reads address blocks printed side by side under
// their headings, each cut at the halfway point between the headings.
func TestPartiesSideBySide(t *testing.T) {
	blocks := `Vendor                          Ship To                        Bill To
Fastener Supply LLC             ACME Industries - Dock 4       ACME Industries
77 Harbor Blvd                  1 Main Street                  PO Box 12
Dallas, TX 75247                Springfield, IL 62701          Springfield, IL 62705

`
	text := strings.Replace(po, "Pos   Item", blocks+"Pos   Item", 1)
	res := readText(t, text)
	if res.Outcome.Status != template.OutcomeSuccess {
		t.Fatalf("outcome %s", res.Outcome)
	}
	want := map[order.Role][]string{
		order.RoleSupplier: {"Fastener Supply LLC", "77 Harbor Blvd", "Dallas, TX 75247"},
		order.RoleDelivery: {"ACME Industries - Dock 4", "1 Main Street", "Springfield, IL 62701"},
		order.RoleInvoice:  {"ACME Industries", "PO Box 12", "Springfield, IL 62705"},
	}
	for role, lines := range want {
		p, ok := res.Order.Party(role)
		if !ok || !slices.Equal(p.Address.Lines, lines) || p.Address.Name != lines[0] {
			t.Errorf("%s: %+v, want %q", role, p.Address, lines)
		}
	}
}

// TestOrderDateAfterArrival: a PO dated 14 March cannot have arrived on
// 10 March; it is rejected, and read when it arrived on 20 March.
func TestOrderDateAfterArrival(t *testing.T) {
	read := func(arrived time.Time) *generic.Result {
		res, err := generic.Read(context.Background(), po, generic.Options{ReceivedAt: arrived})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := read(time.Date(2024, 3, 10, 9, 0, 0, 0, time.UTC)); res.Outcome.Status != template.OutcomeRejected ||
		res.Outcome.Reason != document.ReasonUnknownFormat {
		t.Errorf("arrived before its date: %s", res.Outcome)
	}
	if res := read(time.Date(2024, 3, 20, 9, 0, 0, 0, time.UTC)); res.Outcome.Status != template.OutcomeSuccess {
		t.Errorf("arrived after its date: %s", res.Outcome)
	}
}
