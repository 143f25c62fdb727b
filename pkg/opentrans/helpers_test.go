package opentrans_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var genTime = time.Date(2024, 5, 13, 10, 15, 0, 0, time.FixedZone("CEST", 2*60*60))

var testOpts = opentrans.WriteOptions{GenerationTime: genTime}

// marshalValid writes o, fails on error and checks the document against the
// schema.
func marshalValid(t *testing.T, o *order.Order) []byte {
	t.Helper()
	b, err := opentrans.Marshal(o, testOpts)
	require.NoError(t, err)
	opentranstest.Validate(t, b)
	return b
}

func read(t *testing.T, b []byte) *order.Order {
	t.Helper()
	o, err := opentrans.Read(bytes.NewReader(b))
	require.NoError(t, err)
	return o
}

// elem is an element of a parsed document, for assertions by path.
type elem struct {
	path  string // local names joined by "/", from the root
	attrs map[string]string
	text  string
}

// elements parses doc with encoding/xml (so it also checks well-formedness)
// and lists every element with its path.
func elements(t testing.TB, doc []byte) []*elem {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	// Some shared samples declare ISO-8859-1 but are UTF-8; for finding
	// elements the bytes can pass through.
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var stack []string
	var open []*elem
	var all []*elem
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "document is not well-formed")
		switch tk := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tk.Name.Local)
			e := &elem{path: strings.Join(stack, "/"), attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			open = append(open, e)
			all = append(all, e)
		case xml.EndElement:
			stack, open = stack[:len(stack)-1], open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				open[len(open)-1].text += string(tk)
			}
		}
	}
	return all
}

// texts returns the trimmed text of every element whose path ends with
// suffix (e.g. "ORDER_ITEM/QUANTITY").
func texts(t testing.TB, doc []byte, suffix string) []string {
	t.Helper()
	var out []string
	for _, e := range elements(t, doc) {
		if e.path == suffix || strings.HasSuffix(e.path, "/"+suffix) {
			out = append(out, strings.TrimSpace(e.text))
		}
	}
	return out
}

// attrs returns attribute name of every element whose path ends with suffix.
func attrs(t testing.TB, doc []byte, suffix, name string) []string {
	t.Helper()
	var out []string
	for _, e := range elements(t, doc) {
		if e.path == suffix || strings.HasSuffix(e.path, "/"+suffix) {
			out = append(out, e.attrs[name])
		}
	}
	return out
}

func d(y int, m time.Month, day int) order.Date { return order.Date{Year: y, Month: m, Day: day} }

// fullOrder uses every field of the model, with values as a template
// produces them (units already as codes, so the round trip is exact).
func fullOrder() *order.Order {
	return &order.Order{
		Type:         order.TypeOrder,
		ID:           "4500012345",
		IssueDate:    d(2024, 5, 13),
		DeliveryDate: d(2024, 5, 27),
		Currency:     "EUR",
		Language:     "deu",
		PaymentTerms: "30 Tage netto, 14 Tage 2 % Skonto",
		Parties: []order.Party{
			{Role: order.RoleBuyer, ID: "CONTOSO", IDType: "supplier_specific", VATID: "DE123456789",
				Address: order.Address{Name: "Contoso Pharma GmbH", Name2: "Einkauf", Contact: "Erika Mustermann",
					Street: "Hauptstraße 1", Zip: "70173", City: "Stuttgart", State: "BW", Country: "Deutschland",
					CountryCoded: "DE", Phone: "+49 711 123456", Email: "einkauf@contoso.example"}},
			{Role: order.RoleSupplier, ID: "4711", IDType: "buyer_specific", VATID: "DE987654321",
				Address: order.Address{Name: "Lieferant AG", City: "München", CountryCoded: "DE"}},
			{Role: order.RoleDelivery, ID: "WH-2", IDType: "supplier_specific",
				Address: order.Address{Name: "Contoso Lager", Street: "Lagerweg 5", Zip: "70173", City: "Stuttgart",
					CountryCoded: "DE"}},
			{Role: order.RoleInvoice, ID: "AP-1",
				Address: order.Address{Lines: []string{"Contoso Buchhaltung", "Postfach 12 34", "70001 Stuttgart"}}},
		},
		Items: []order.Item{
			{Position: "10", SupplierArticleID: "A-100", BuyerArticleID: "MAT-77", EAN: "4006381333931",
				Description: "Schraube M8x40 DIN 933", LongDescription: "Sechskantschraube, verzinkt\nVPE 100",
				Quantity: "1000", Unit: "C62", UnitPrice: "12.50", PriceBasisQuantity: "100", LineAmount: "125.00",
				TaxRate: "19", DeliveryDate: d(2024, 5, 20), Remarks: []string{"Bitte einzeln verpacken"}},
			{Position: "20", SupplierArticleID: "K-7", Description: "Kabel NYM-J 3x1,5", Quantity: "50.5",
				Unit: "MTR", UnitPrice: "0.89", LineAmount: "44.95"},
		},
		Totals:  order.Totals{NetAmount: "169.95", TaxAmount: "32.29", GrossAmount: "202.24"},
		Remarks: []string{"Bitte Bestellnummer auf Lieferschein angeben"},
	}
}

func fullInvoice() *order.Order {
	o := fullOrder()
	o.Type = order.TypeInvoice
	o.ID = "RE-2024-0815"
	o.BuyerOrderID = "4500012345"
	o.Items[0].DeliveryDate = order.Date{}
	return o
}
