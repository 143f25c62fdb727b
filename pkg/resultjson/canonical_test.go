package resultjson_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/stretchr/testify/require"
)

// A result JSON order turns back into the canonical order it was rendered
// from; what the JSON does not carry comes from the base.
func TestCanonicalRoundTrip(t *testing.T) {
	t.Parallel()
	o := &order.Order{Type: order.TypeOrder, ID: "PO-1", IssueDate: order.Date{Year: 2026, Month: 2, Day: 3},
		Currency: "EUR", Parties: []order.Party{{Role: order.RoleBuyer, ID: "B1", VATID: "DE1",
			Address: order.Address{Name: "ACME", City: "Berlin"}, OtherIDs: []order.PartyID{{ID: "4000001000005", Type: "gln"}}}},
		Items: []order.Item{{Position: "1", BuyerArticleID: "B-1", Quantity: "10", Unit: "C62", UnitPrice: "2",
			LineAmount: "18", DiscountPercent: "10", DeliveryDate: order.Date{Year: 2026, Month: 3, Day: 1}}},
		Totals: order.Totals{NetAmount: "18", LinesAmount: "18", Charges: "1"}, Remarks: []string{"r"}}
	got, err := resultjson.OrderOf(o).Canonical(o)
	require.NoError(t, err)
	require.Equal(t, o, got)

	noBase, err := resultjson.OrderOf(o).Canonical(nil)
	require.NoError(t, err)
	require.Empty(t, noBase.Items[0].DiscountPercent)
	require.Empty(t, noBase.Totals.LinesAmount)

	bad := resultjson.OrderOf(o)
	bad.Items[0].DeliveryDate = "1.3.2026"
	_, err = bad.Canonical(o)
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
	require.ErrorContains(t, err, "items[0].delivery_date")
}
