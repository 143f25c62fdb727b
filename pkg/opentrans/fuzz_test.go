package opentrans_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

// roundTripStable checks the property both fuzz targets rely on: a written
// document is well-formed, reads back, and writing what was read gives the
// same bytes and reads back to the same model (Write ∘ Read is a fixpoint on
// everything Write produces).
func roundTripStable(t *testing.T, doc []byte) {
	t.Helper()
	elements(t, doc) // well-formed per encoding/xml
	o1, err := opentrans.Read(bytes.NewReader(doc))
	require.NoError(t, err, "written document does not read back:\n%s", doc)
	doc2, err := opentrans.Marshal(o1, testOpts)
	require.NoError(t, err, "model read from a written document cannot be written:\n%s", doc)
	require.Equal(t, string(doc), string(doc2))
	o2, err := opentrans.Read(bytes.NewReader(doc2))
	require.NoError(t, err)
	require.Equal(t, o1, o2)
}

func cents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

var fuzzTypes = []order.DocumentType{order.TypeOrder, order.TypeOrderResponse, order.TypeInvoice}

// FuzzWrite puts arbitrary strings into every text field of the model. Write
// either refuses with EINVALID or produces a well-formed document that reads
// back stably.
func FuzzWrite(f *testing.F) {
	f.Add(uint8(0), "PO-1", "Muster GmbH", "Hauptstr. 1", "Schraube M8", "Stk", "EUR", "Bitte", "10", "A-1", "5", int64(250), uint16(1))
	f.Add(uint8(1), "a<b&c]]>", "\x00\x01\x0c", "\xff\xfe", "\uFFFE\uFFFF", "Bund", "PLN", "Payment terms: x", "", "", "1,5", int64(-1), uint16(0))
	f.Add(uint8(6), " ", "ÄÖÜ ß €", "\r\n\t", "Net amount: 3", "km", "€", "Full value of LINE_ITEM_ID: y", "A-1", "B", "2", int64(1<<40), uint16(100))
	f.Add(uint8(10), "INV", "x", "y", "z", "", "", "", "1", "p", "1", int64(0), uint16(3))
	f.Add(uint8(48+4), "PO-9", "a", "b", "c", "Stk", "EUR", "Discount amount of the line: 5", "1", "A", "3", int64(1000), uint16(7))
	f.Fuzz(func(t *testing.T, flags uint8, id, name, street, desc, unit, currency, remark, pos, pid, qty string, c int64, basis uint16) {
		quantity := cents(c % 100000)
		if flags&4 != 0 {
			quantity = qty
		}
		var basisQty string
		if basis > 0 {
			basisQty = fmt.Sprint(basis)
		}
		o := &order.Order{
			Type: fuzzTypes[int(flags%3)], ID: id, BuyerOrderID: pid, IssueDate: order.Date{Year: 2024, Month: 2, Day: 29},
			DeliveryDate: order.Date{Year: 2024, Month: 3, Day: int(basis%28) + 1},
			Currency:     currency, Language: unit, PaymentTerms: remark, NoItems: flags&8 != 0,
			Parties: []order.Party{
				{Role: order.RoleBuyer, ID: pid, IDType: name, VATID: id, Address: order.Address{
					Name: name, Name2: street, Contact: desc, Street: street, Zip: pos, City: name, State: unit,
					Country: currency, CountryCoded: currency, Phone: pos, Email: remark, Lines: []string{street, remark}}},
				{Role: order.Role(unit), ID: name, IDType: unit},
				{Role: order.RoleDelivery, ID: pid, Address: order.Address{Name: desc}},
			},
			Items: []order.Item{
				{Position: pos, SupplierArticleID: pid, BuyerArticleID: desc, EAN: id, Description: desc,
					LongDescription: remark, Quantity: quantity, Unit: unit, UnitPrice: cents(c), PriceBasisQuantity: basisQty,
					LineAmount: cents(c / 3), TaxRate: fmt.Sprint(basis % 30), Remarks: []string{remark, name},
					DeliveryDate: order.Date{Year: 2024, Month: 12, Day: 31}},
				{Quantity: "1", UnitPrice: "1", LineAmount: "1", Unit: street, Description: name},
			},
			Totals:  order.Totals{NetAmount: cents(c), TaxAmount: cents(c / 5)},
			Remarks: []string{remark, desc, unit},
		}
		// Line discounts: a percentage (negative ones are surcharges) and
		// an amount that is not always a whole amount per price unit.
		if flags&16 != 0 {
			o.Items[0].DiscountPercent = fmt.Sprint(int(basis%150) - 25)
		}
		if flags&32 != 0 {
			o.Items[0].DiscountAmount = cents(c / 7)
		}
		doc, err := opentrans.Marshal(o, testOpts)
		if err != nil {
			require.Equal(t, document.EINVALID, document.ErrorKind(err), "%v", err)
			return
		}
		roundTripStable(t, doc)
	})
}

// FuzzParseOrder reads arbitrary bytes; whatever reads as an order must
// write and read back stably (parse → marshal → parse).
func FuzzParseOrder(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.xml"))
	require.NoError(f, err)
	require.NotEmpty(f, seeds)
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, o := range []*order.Order{fullOrder(), fullInvoice(), discountOrder()} {
		b, err := opentrans.Marshal(o, testOpts)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := opentrans.Read(bytes.NewReader(data))
		if err != nil {
			require.Equal(t, document.EINVALID, document.ErrorKind(err), "%v", err)
			return
		}
		doc, err := opentrans.Marshal(o, testOpts)
		if err != nil {
			require.Equal(t, document.EINVALID, document.ErrorKind(err), "%v", err)
			return
		}
		roundTripStable(t, doc)
	})
}
