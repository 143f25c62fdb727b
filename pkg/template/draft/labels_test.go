package draft_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/order"
)

// A kept value is never itself a label (docs/templates.md, "Start from a
// draft"). The headings of party blocks the drafter has no field for
// ("Invoice To", "BILL TO") are labels, so the letterhead is the name under
// "Invoice To" and the vendor is the name under "Vendor", not the heading
// printed next to it.
const partyHeadings = `Invoice To                                        PURCHASE ORDER
Fabrikam Residences                               PO No.: 1045
123 Elm St                                        Date: 05/14/2024
Seattle, WA 98101

Vendor                BILL TO                     Ship To
Northwind Traders     Fabrikam Accounts           Fabrikam Plant
55 Pine Rd            PO Box 77                   9 Mill Rd
Tacoma, WA 98402      Seattle, WA 98111           Redmond, WA 98052

Item            Description                     Qty        Rate        Amount
Lumber-2x4      2x4 stud 8 ft                   120        3.25        390.00
Nails-16d       Framing nails 16d, 50 lb box      2       89.99        179.98

                                                          Total       $569.98
`

// A copy mark above the letterhead ("Original") and a qualifier after the
// supplier's label ("Seller (Bill from)") are not values either.
const copyMark = `Original                                            PURCHASE ORDER
Hooli Components B.V.                               PO Number: HC-2024-118
Keizersgracht 14, 1015 CJ Amsterdam                 PO Date: 12.03.2024

Seller (Bill from)                    Ship To
Acme Fasteners                        Hooli Plant 2
Ringweg 22                            Havenstraat 7
3011 AA Rotterdam                     1013 BD Amsterdam

Item       Description            Qty      Rate      Amount
F-100      Hex bolt M8            500      2.50     1250.00
F-200      Nut M8                 500      0.80      400.00

                                            Total    1650.00
`

func TestDraftLabelsAreNotValues(t *testing.T) {
	t.Parallel()
	d := build(t, partyHeadings)
	o := read(t, d, partyHeadings)
	require.Equal(t, "1045", o.ID)
	require.Equal(t, "Fabrikam Residences", party(o, order.RoleBuyer).Address.Name)
	require.Equal(t, order.Address{Name: "Northwind Traders", Street: "55 Pine Rd", City: "Tacoma", State: "WA", Zip: "98402"}, party(o, order.RoleSupplier).Address)
	require.Equal(t, "Fabrikam Plant", party(o, order.RoleDelivery).Address.Name)
	require.NotContains(t, string(d.YAML), "value: Invoice To")

	d = build(t, copyMark)
	o = read(t, d, copyMark)
	require.Equal(t, "HC-2024-118", o.ID)
	require.Equal(t, "Hooli Components B.V.", party(o, order.RoleBuyer).Address.Name)
	require.Equal(t, order.Address{Name: "Acme Fasteners", Street: "Ringweg 22", City: "Rotterdam", Zip: "3011 AA"}, party(o, order.RoleSupplier).Address)
	require.Equal(t, "Hooli Plant 2", party(o, order.RoleDelivery).Address.Name)
	for _, label := range []string{"Original", "(Bill from)", "BILL TO", "Invoice To"} {
		for _, p := range o.Parties {
			require.NotEqual(t, label, p.Address.Name, "party %s", p.Role)
		}
	}
}
