package generic_test

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// read reads a PDF of the corpus through its layout text.
func read(t *testing.T, pdf string) *generic.Result {
	t.Helper()
	return readText(t, templatetest.PDFText(t, pdf))
}

// truth is the truth JSON the synthetic corpus ships with each PDF.
type truth struct {
	OrderID   string  `json:"order_id"`
	OrderDate string  `json:"order_date"`
	Currency  string  `json:"currency"`
	Net       float64 `json:"net"`
	Total     float64 `json:"total"`
	Items     []struct {
		Quantity   float64 `json:"quantity"`
		UnitPrice  float64 `json:"unit_price"`
		LineAmount float64 `json:"line_amount"`
	} `json:"items"`
}

// TestSyntheticCorpus reads the 15 generated POs of five layouts without a
// template: every delivered value must equal the truth printed on the PDF
// (never a wrong success), and the number delivered may only rise.
func TestSyntheticCorpus(t *testing.T) {
	dir := filepath.Join(templatetest.SharedDir(t), "corpus", "synthetic")
	files, _ := filepath.Glob(filepath.Join(dir, "*.pdf"))
	if len(files) == 0 {
		t.Fatalf("no PDFs in %s", dir)
	}
	delivered := 0
	for _, f := range files {
		var tr truth
		raw, err := os.ReadFile(strings.TrimSuffix(f, ".pdf") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &tr); err != nil {
			t.Fatal(err)
		}
		res := read(t, f)
		if res.Outcome.Status != template.OutcomeSuccess {
			t.Logf("%s: %s", filepath.Base(f), res.Outcome)
			continue
		}
		delivered++
		for _, d := range diffTruth(res.Order, tr) {
			t.Errorf("%s delivered a wrong value: %s", filepath.Base(f), d)
		}
	}
	t.Logf("delivered %d of %d synthetic POs", delivered, len(files))
	// Measured 2026-11-27: 14 of 15. durand-3 prints "400" at the end of
	// a wrapped description line and is rejected, not guessed.
	if delivered < 14 {
		t.Errorf("delivered %d of %d synthetic POs, want at least 14", delivered, len(files))
	}
}

func diffTruth(o *order.Order, tr truth) []string {
	var out []string
	eq := func(name, got string, want float64) {
		if r := rat(got); r == "" || r != fmtFloat(want) {
			out = append(out, name+": got "+got)
		}
	}
	if o.ID != tr.OrderID {
		out = append(out, "order id "+o.ID+", want "+tr.OrderID)
	}
	if o.IssueDate.String() != tr.OrderDate {
		out = append(out, "order date "+o.IssueDate.String()+", want "+tr.OrderDate)
	}
	if o.Currency != tr.Currency {
		out = append(out, "currency "+o.Currency+", want "+tr.Currency)
	}
	eq("gross total", o.Totals.GrossAmount, tr.Total)
	if len(o.Items) != len(tr.Items) {
		return append(out, "item count differs")
	}
	for i, it := range tr.Items {
		eq("quantity", o.Items[i].Quantity, it.Quantity)
		eq("unit price", o.Items[i].UnitPrice, it.UnitPrice)
		eq("line amount", o.Items[i].LineAmount, it.LineAmount)
	}
	return out
}

// TestContosoAgainstItsTemplate reads the eight real Contoso POs without a
// template and compares every scored value with what the hand-written
// contoso-po template (checked against the PDFs value by value) reads.
func TestContosoAgainstItsTemplate(t *testing.T) {
	set, err := template.LoadWith(template.LoadOptions{}, filepath.Join(templatetest.RepoRoot(t), "deploy", "templates"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(templatetest.SharedDir(t), "corpus", "orders", "contoso-po-*.pdf"))
	delivered := 0
	for _, f := range files {
		text := templatetest.PDFText(t, f)
		want, err := set.Run(context.Background(), text, template.RunOptions{Template: "contoso-po"})
		if err != nil || want.Outcome.Status != template.OutcomeSuccess {
			t.Fatalf("%s: the template does not read it: %v %v", f, err, want.Outcome)
		}
		res := read(t, f)
		if res.Outcome.Status != template.OutcomeSuccess {
			t.Logf("%s: %s", filepath.Base(f), res.Outcome)
			continue
		}
		delivered++
		for _, d := range diffOrders(res.Order, want.Order) {
			t.Errorf("%s delivered a wrong value: %s", filepath.Base(f), d)
		}
	}
	// Measured 2026-11-27: all 8.
	if delivered < 8 {
		t.Errorf("delivered %d of %d Contoso POs, want 8", delivered, len(files))
	}
}

func diffOrders(got, want *order.Order) []string {
	var out []string
	cmp := func(name, g, w string) {
		if rat(g) != rat(w) && g != w {
			out = append(out, name+": got "+g+", want "+w)
		}
	}
	cmp("order id", got.ID, want.ID)
	cmp("order date", got.IssueDate.String(), want.IssueDate.String())
	cmp("currency", got.Currency, want.Currency)
	cmp("gross total", got.Totals.GrossAmount, want.Totals.GrossAmount)
	if len(got.Items) != len(want.Items) {
		return append(out, "item count differs")
	}
	for i := range want.Items {
		cmp("quantity", got.Items[i].Quantity, want.Items[i].Quantity)
		cmp("unit price", got.Items[i].UnitPrice, want.Items[i].UnitPrice)
		cmp("line amount", got.Items[i].LineAmount, want.Items[i].LineAmount)
	}
	return out
}

// TestNonOrdersAreNeverDelivered: the invoices of the corpus are refused;
// those titled as invoices are not_an_order.
func TestNonOrdersAreNeverDelivered(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(templatetest.SharedDir(t), "corpus", "other", "*.pdf"))
	titled := map[string]bool{"facturx-invoice-en16931.pdf": true, "mustang-facture-f20180027.pdf": true, "mustang-invoice-103767.pdf": true}
	for _, f := range files {
		res := read(t, f)
		if res.Outcome.Status == template.OutcomeSuccess {
			t.Errorf("%s: an invoice was delivered as an order", filepath.Base(f))
		}
		if titled[filepath.Base(f)] && res.Outcome.Reason != document.ReasonNotAnOrder {
			t.Errorf("%s: %s, want not_an_order", filepath.Base(f), res.Outcome)
		}
	}
}

// rat is a decimal's exact value ("" when s is not a decimal), so 5518.00
// and 5518 compare equal.
func rat(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return ""
	}
	return r.RatString()
}

// fmtFloat is the exact value of a truth JSON number as printed (its
// shortest decimal form).
func fmtFloat(f float64) string { return rat(strconv.FormatFloat(f, 'f', -1, 64)) }

// TestDeterministic reads every synthetic PO many times: the same text
// always gives the same reading (no map order leaks into it).
func TestDeterministic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(templatetest.SharedDir(t), "corpus", "synthetic", "*.pdf"))
	for _, f := range files {
		text := templatetest.PDFText(t, f)
		first, err := generic.Read(context.Background(), text, generic.Options{Debug: true})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			again, err := generic.Read(context.Background(), text, generic.Options{Debug: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(first, again) {
				t.Fatalf("%s: two readings of the same text differ", filepath.Base(f))
			}
		}
	}
}

// TestContosoShipTo reads the SHIP TO block of a real Contoso PO beside its
// VENDOR block, line by line as the PDF prints it.
func TestContosoShipTo(t *testing.T) {
	res := read(t, filepath.Join(templatetest.SharedDir(t), "corpus", "orders", "contoso-po-Adatum-Adel.pdf"))
	p, ok := res.Order.Party(order.RoleDelivery)
	want := []string{"Adel Vance", "Contoso Electronics", "21930 SE 51st St", "Issaquah, WA 98029", "1 (800) 555-7676"}
	if !ok || !reflect.DeepEqual(p.Address.Lines, want) {
		t.Errorf("ship to %q, want %q", p.Address.Lines, want)
	}
	v, ok := res.Order.Party(order.RoleSupplier)
	if !ok || v.Address.Name != "Adatum Corporation" || !reflect.DeepEqual(v.Address.Lines[:4], []string{"Adatum Corporation", "Pradeep Gupta", "3333 Bristol Street South Coast", "Costa Mesa, CA 92626"}) {
		t.Errorf("vendor %+v", v.Address)
	}
}
