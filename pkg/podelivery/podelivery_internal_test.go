package podelivery

import (
	"crypto/sha256"
	"encoding/json"
	"testing"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/stretchr/testify/require"
)

func samplePO() *order.Order {
	return &order.Order{Type: order.TypeOrder, ID: "4500012345", IssueDate: order.Date{Year: 2026, Month: 2, Day: 3},
		Currency: "EUR", Language: "deu", Remarks: []string{"printed 2026-02-03 10:15"},
		Parties: []order.Party{
			{Role: order.RoleBuyer, ID: "ACME", Address: order.Address{Name: "ACME Corp", City: "Berlin"}},
			{Role: order.RoleDelivery, Address: order.Address{Name: "ACME Lager", Street: "Hafenstr. 1", Zip: "20457", City: "Hamburg"}},
		},
		Items: []order.Item{
			{BuyerArticleID: "B-1", SupplierArticleID: "S-100", Description: "Bolts", Quantity: "10", UnitPrice: "1.50"},
			{BuyerArticleID: "N-2", SupplierArticleID: "S-200", Description: "Nuts", Quantity: "20", UnitPrice: "0.25",
				Remarks: []string{"page 1"}},
		},
		Totals: order.Totals{NetAmount: "20.00"},
	}
}

func canonicalSum(t *testing.T, o *order.Order) [32]byte {
	t.Helper()
	b, err := Canonical(o)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// The canonical order ignores what differs between two prints of one PO
// (remarks, detected language, white space, decimal notation) and changes
// with every business value.
func TestCanonicalOrderHash(t *testing.T) {
	base := canonicalSum(t, samplePO())
	same := map[string]func(*order.Order){
		"remarks":               func(o *order.Order) { o.Remarks = []string{"printed 2026-02-04 08:00", "copy"} },
		"line remarks":          func(o *order.Order) { o.Items[1].Remarks = nil },
		"language":              func(o *order.Order) { o.Language = "eng" },
		"white space":           func(o *order.Order) { o.Parties[1].Address.Street = "  Hafenstr.   1 " },
		"decimal zeros":         func(o *order.Order) { o.Items[0].Quantity, o.Totals.NetAmount = "10.000", "20" },
		"price basis 1 implied": func(o *order.Order) { o.Items[0].PriceBasisQuantity = "1.0" },
	}
	for name, edit := range same {
		o := samplePO()
		edit(o)
		require.Equal(t, base, canonicalSum(t, o), name)
	}
	changed := map[string]func(*order.Order){
		"quantity":         func(o *order.Order) { o.Items[1].Quantity = "21" },
		"price":            func(o *order.Order) { o.Items[0].UnitPrice = "1.55" },
		"order date":       func(o *order.Order) { o.IssueDate.Day = 4 },
		"delivery date":    func(o *order.Order) { o.Items[0].DeliveryDate = order.Date{Year: 2026, Month: 3, Day: 1} },
		"delivery address": func(o *order.Order) { o.Parties[1].Address.Street = "Hafenstr. 2" },
		"line added":       func(o *order.Order) { o.Items = append(o.Items, order.Item{BuyerArticleID: "W-3", Quantity: "1"}) },
		"line removed":     func(o *order.Order) { o.Items = o.Items[:1] },
		"article":          func(o *order.Order) { o.Items[0].SupplierArticleID = "S-101" },
	}
	for name, edit := range changed {
		o := samplePO()
		edit(o)
		require.NotEqual(t, base, canonicalSum(t, o), name)
	}
	// The order passed in is not modified.
	o := samplePO()
	_ = canonicalSum(t, o)
	require.Equal(t, samplePO(), o)
}

func canonicalOrder(t *testing.T, o *order.Order) *order.Order {
	t.Helper()
	b, err := Canonical(o)
	require.NoError(t, err)
	var c order.Order
	require.NoError(t, json.Unmarshal(b, &c))
	return &c
}

func TestDiffOrders(t *testing.T) {
	prev := canonicalOrder(t, samplePO())
	require.Empty(t, Diff(prev, canonicalOrder(t, samplePO())))

	o := samplePO()
	o.Items[1].Quantity = "12.00" // line 2: 20 → 12
	o.Items[0].UnitPrice = "1.6"
	o.Items = append(o.Items, order.Item{SupplierArticleID: "S-300", Quantity: "5", Unit: "C62"})
	o.Parties[1].Address.Street = "Hafenstr. 2"
	require.Equal(t, []string{
		"delivery address ACME Lager, Hafenstr. 1, 20457 Hamburg → ACME Lager, Hafenstr. 2, 20457 Hamburg",
		"line 1 unit price 1.5 → 1.6",
		"line 2 quantity 20 → 12",
		"line 3 added (S-300 quantity 5 C62)",
	}, Diff(prev, canonicalOrder(t, o)))

	// Printed positions match lines even when one is dropped in between.
	withPos := func(o *order.Order) *order.Order {
		o.Items = append(o.Items, order.Item{SupplierArticleID: "S-300", Quantity: "5"})
		for i := range o.Items {
			o.Items[i].Position = []string{"10", "20", "30"}[i]
		}
		return o
	}
	prev = canonicalOrder(t, withPos(samplePO()))
	o = withPos(samplePO())
	o.Items = append(o.Items[:1], o.Items[2])
	o.Items[1].Quantity = "6"
	require.Equal(t, []string{"line 20 removed (S-200 quantity 20)", "line 30 quantity 5 → 6"}, Diff(prev, canonicalOrder(t, o)))
}

// The identity's buyer: the upload's party, the template's first party id,
// the buyer id read, else the template name.
func TestBuyer(t *testing.T) {
	tmpl := func(ids ...string) *catalogue.Version {
		return &catalogue.Version{Template: &template.Template{DocIntake: template.DocIntake{PartyIDs: ids}}}
	}
	o := samplePO()
	require.Equal(t, "P-9", Buyer(document.Document{PartyID: "P-9", Template: "acme"}, tmpl("ACME"), o))
	require.Equal(t, "ACME-T", Buyer(document.Document{Template: "acme"}, tmpl("ACME-T", "X"), o))
	require.Equal(t, "ACME", Buyer(document.Document{Template: "generic"}, tmpl(), o))
	o.Parties = o.Parties[1:]
	require.Equal(t, "generic", Buyer(document.Document{Template: "generic"}, tmpl(), o))

	_, ok, err := Prepare(document.Document{}, nil, &order.Order{Type: order.TypeOrderResponse, ID: "1"})
	require.NoError(t, err)
	require.False(t, ok, "order responses are not POs")
	po, ok, err := Prepare(document.Document{ClientID: "acme", Template: "acme"}, tmpl("ACME"), samplePO())
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.POIdentity{ClientID: "acme", Buyer: "ACME", OrderID: "4500012345"}, po.ID)
	require.Equal(t, canonicalSum(t, samplePO()), [32]byte(po.Sum))
}

func TestDecide(t *testing.T) {
	doc := document.Document{ID: "d2", LogID: "log-2"}
	id := store.POIdentity{ClientID: "acme", Buyer: "ACME", OrderID: "A-1"}
	sum := []byte("sum-2")
	prev := store.PODelivery{POIdentity: id, Revision: 1, ContentSHA256: []byte("sum-1"), DocumentID: "d1", LogID: "log-1",
		FirstLogID: "log-0", Live: true}

	d := Decide(doc, PO{ID: id, Sum: sum}, store.PODelivery{}, false)
	require.Equal(t, Original, d.Kind)
	require.Nil(t, d.Prev)
	require.Equal(t, "log-2", d.Next.FirstLogID)

	d = Decide(doc, PO{ID: id, Sum: sum}, prev, true)
	require.Equal(t, Revision, d.Kind)
	require.Equal(t, 2, d.Next.Revision)
	require.Equal(t, "log-0", d.Next.FirstLogID)

	d = Decide(doc, PO{ID: id, Sum: []byte("sum-1")}, prev, true)
	require.Equal(t, Duplicate, d.Kind)

	expired := prev
	expired.Live = false
	d = Decide(doc, PO{ID: id, Sum: []byte("sum-1")}, expired, true)
	require.Equal(t, Original, d.Kind, "delivered before the window: a new order")
	require.Equal(t, 0, d.Next.Revision)
	require.Equal(t, "log-1", d.Prev.LogID, "replaces the old delivery by compare-and-set")

	again := prev
	again.DocumentID = doc.ID
	d = Decide(doc, PO{ID: id, Sum: sum}, again, true)
	require.Equal(t, Again, d.Kind, "a reprocessed document is no duplicate of itself")
	require.Equal(t, 1, d.Next.Revision)
}
