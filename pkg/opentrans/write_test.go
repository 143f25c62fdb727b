package opentrans_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
)

func TestWrite_fullOrder(t *testing.T) {
	t.Parallel()
	o := fullOrder()
	doc := marshalValid(t, o)

	// Values and places as the openTRANS 2.1 ORDER specification defines them.
	require.Equal(t, []string{"4500012345"}, texts(t, doc, "ORDER_INFO/ORDER_ID"))
	require.Equal(t, []string{"2024-05-13"}, texts(t, doc, "ORDER_INFO/ORDER_DATE"))
	require.Equal(t, []string{"2024-05-27"}, texts(t, doc, "ORDER_INFO/DELIVERY_DATE/DELIVERY_END_DATE"))
	require.Equal(t, []string{"deu"}, texts(t, doc, "ORDER_INFO/LANGUAGE"))
	require.Equal(t, []string{"EUR"}, texts(t, doc, "ORDER_INFO/CURRENCY"))
	require.Equal(t, []string{"docintake"}, texts(t, doc, "CONTROL_INFO/GENERATOR_INFO"))
	require.Equal(t, []string{"2024-05-13T10:15:00+02:00"}, texts(t, doc, "CONTROL_INFO/GENERATION_DATE"))
	require.Equal(t, []string{"buyer", "supplier", "delivery", "invoice_recipient"}, texts(t, doc, "PARTY/PARTY_ROLE"))
	require.Equal(t, []string{"CONTOSO"}, texts(t, doc, "ORDER_PARTIES_REFERENCE/BUYER_IDREF"))
	require.Equal(t, []string{"supplier_specific"}, attrs(t, doc, "ORDER_PARTIES_REFERENCE/BUYER_IDREF", "type"))
	require.Equal(t, []string{"4711"}, texts(t, doc, "ORDER_PARTIES_REFERENCE/SUPPLIER_IDREF"))
	require.Equal(t, []string{"AP-1"}, texts(t, doc, "ORDER_PARTIES_REFERENCE/INVOICE_RECIPIENT_IDREF"))
	require.Equal(t, []string{"WH-2"}, texts(t, doc, "SHIPMENT_PARTIES_REFERENCE/DELIVERY_IDREF"))
	require.Equal(t, []string{"DE123456789", "DE987654321"}, texts(t, doc, "ADDRESS/VAT_ID"))
	require.Equal(t, []string{"Erika Mustermann"}, texts(t, doc, "ADDRESS/CONTACT_DETAILS/CONTACT_NAME"))
	require.Equal(t, []string{"Contoso Buchhaltung", "Postfach 12 34", "70001 Stuttgart"}, texts(t, doc, "ADDRESS/ADDRESS_REMARKS"))

	require.Equal(t, []string{"10", "20"}, texts(t, doc, "ORDER_ITEM/LINE_ITEM_ID"))
	require.Equal(t, []string{"A-100", "K-7"}, texts(t, doc, "PRODUCT_ID/SUPPLIER_PID"))
	require.Equal(t, []string{"4006381333931"}, texts(t, doc, "PRODUCT_ID/INTERNATIONAL_PID"))
	require.Equal(t, []string{"gtin"}, attrs(t, doc, "PRODUCT_ID/INTERNATIONAL_PID", "type"))
	require.Equal(t, []string{"MAT-77"}, texts(t, doc, "PRODUCT_ID/BUYER_PID"))
	require.Equal(t, []string{"1000", "50.5"}, texts(t, doc, "ORDER_ITEM/QUANTITY"))
	require.Equal(t, []string{"C62", "MTR"}, texts(t, doc, "ORDER_ITEM/ORDER_UNIT"))
	require.Equal(t, []string{"12.50", "0.89"}, texts(t, doc, "PRODUCT_PRICE_FIX/PRICE_AMOUNT"))
	require.Equal(t, []string{"100"}, texts(t, doc, "PRODUCT_PRICE_FIX/PRICE_QUANTITY"))
	require.Equal(t, []string{"0.19"}, texts(t, doc, "TAX_DETAILS_FIX/TAX"), "TAX is a factor: 0.19 = 19 %")
	require.Equal(t, []string{"125.00", "44.95"}, texts(t, doc, "ORDER_ITEM/PRICE_LINE_AMOUNT"))
	require.Equal(t, []string{"2024-05-20"}, texts(t, doc, "ORDER_ITEM/DELIVERY_DATE/DELIVERY_START_DATE"))
	require.Equal(t, []string{"2"}, texts(t, doc, "ORDER_SUMMARY/TOTAL_ITEM_NUM"))
	require.Equal(t, []string{"202.24"}, texts(t, doc, "ORDER_SUMMARY/TOTAL_AMOUNT"), "TOTAL_AMOUNT is the gross total")
	require.Equal(t, []string{
		"Payment terms: 30 Tage netto, 14 Tage 2 % Skonto",
		"Net amount: 169.95",
		"Tax amount: 32.29",
		"Bitte Bestellnummer auf Lieferschein angeben",
	}, texts(t, doc, "ORDER_INFO/REMARKS"))

	require.Equal(t, o, read(t, doc), "model -> XML -> model")
}

func TestWrite_minimalOrder(t *testing.T) {
	t.Parallel()
	o := &order.Order{Type: order.TypeOrder, ID: "1", IssueDate: d(2024, 1, 2), Items: []order.Item{{Quantity: "3"}}}
	doc := marshalValid(t, o)
	require.Equal(t, []string{"buyer", "supplier"}, texts(t, doc, "PARTY/PARTY_ID"), "parties generated for the IDREFs")
	require.Equal(t, []string{"1"}, texts(t, doc, "ORDER_ITEM/LINE_ITEM_ID"), "position generated from the line number")
	require.Equal(t, []string{"C62"}, texts(t, doc, "ORDER_ITEM/ORDER_UNIT"))
	require.Empty(t, texts(t, doc, "CURRENCY"))
	require.Empty(t, texts(t, doc, "PRODUCT_PRICE_FIX"))
	require.Empty(t, texts(t, doc, "REMARKS"))

	want := *o
	want.Parties = []order.Party{{Role: order.RoleBuyer, ID: "buyer"}, {Role: order.RoleSupplier, ID: "supplier"}}
	want.Items = []order.Item{{Position: "1", Quantity: "3", Unit: "C62"}}
	require.Equal(t, &want, read(t, doc))
}

func TestWrite_orderResponse(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		id, buyerOrderID         string
		orderID, supplierOrderID []string
		wantID, wantBuyerOrderID string
	}{
		"both numbers": {id: "AB-2024-77", buyerOrderID: "4500012345", orderID: []string{"4500012345"},
			supplierOrderID: []string{"AB-2024-77"}, wantID: "AB-2024-77", wantBuyerOrderID: "4500012345"},
		"own number only": {id: "AB-2024-77", orderID: []string{"AB-2024-77"}, wantID: "AB-2024-77"},
		"buyer's number only": {buyerOrderID: "4500012345", orderID: []string{"4500012345"},
			wantID: "4500012345"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := fullOrder()
			o.Type, o.ID, o.BuyerOrderID = order.TypeOrderResponse, tt.id, tt.buyerOrderID
			doc := marshalValid(t, o)
			require.Equal(t, tt.orderID, texts(t, doc, "ORDERRESPONSE_INFO/ORDER_ID"))
			require.Equal(t, tt.supplierOrderID, texts(t, doc, "ORDERRESPONSE_INFO/SUPPLIER_ORDER_ID"))
			require.Equal(t, []string{"2024-05-13"}, texts(t, doc, "ORDERRESPONSE_INFO/ORDERRESPONSE_DATE"))
			require.Equal(t, []string{"2"}, texts(t, doc, "ORDERRESPONSE_SUMMARY/TOTAL_ITEM_NUM"))
			require.Len(t, texts(t, doc, "ORDERRESPONSE_ITEM"), 2)

			want := *o
			want.ID, want.BuyerOrderID = tt.wantID, tt.wantBuyerOrderID
			require.Equal(t, &want, read(t, doc))
		})
	}
}

func TestWrite_invoice(t *testing.T) {
	t.Parallel()
	t.Run("full", func(t *testing.T) {
		t.Parallel()
		o := fullInvoice()
		o.Items[1].DeliveryDate = d(2024, 5, 21)
		doc := marshalValid(t, o)
		require.Equal(t, []string{"RE-2024-0815"}, texts(t, doc, "INVOICE_INFO/INVOICE_ID"))
		require.Equal(t, []string{"2024-05-13"}, texts(t, doc, "INVOICE_INFO/INVOICE_DATE"))
		require.Equal(t, []string{"4500012345"}, texts(t, doc, "INVOICE_HEADER/ORDER_HISTORY/ORDER_ID"))
		require.Equal(t, []string{"4711"}, texts(t, doc, "INVOICE_INFO/INVOICE_ISSUER_IDREF"), "the supplier issues")
		require.Equal(t, []string{"AP-1"}, texts(t, doc, "INVOICE_INFO/INVOICE_RECIPIENT_IDREF"))
		require.Equal(t, []string{"WH-2"}, texts(t, doc, "INVOICE_INFO/DELIVERY_IDREF"))
		require.Equal(t, []string{"169.95"}, texts(t, doc, "INVOICE_SUMMARY/NET_VALUE_GOODS"))
		require.Equal(t, []string{"202.24"}, texts(t, doc, "INVOICE_SUMMARY/TOTAL_AMOUNT"))
		require.Equal(t, []string{"32.29"}, texts(t, doc, "INVOICE_SUMMARY/TOTAL_TAX/TAX_DETAILS_FIX/TAX_AMOUNT"))
		require.Equal(t, []string{"Bitte einzeln verpacken", "Delivery date: 2024-05-21"}, texts(t, doc, "INVOICE_ITEM/REMARKS"),
			"INVOICE_ITEM has no DELIVERY_DATE")
		require.Equal(t, o, read(t, doc))
	})
	t.Run("minimal, totals derived", func(t *testing.T) {
		t.Parallel()
		o := &order.Order{Type: order.TypeInvoice, ID: "R1", IssueDate: d(2024, 5, 21),
			Items: []order.Item{
				{Quantity: "10", UnitPrice: "2.50", LineAmount: "25.00"},
				{Quantity: "1", UnitPrice: "0.125", LineAmount: "0.125"},
			},
			Totals: order.Totals{TaxAmount: "4.77"}}
		doc := marshalValid(t, o)
		require.Equal(t, []string{"EUR"}, texts(t, doc, "INVOICE_INFO/CURRENCY"), "CURRENCY is mandatory in INVOICE")
		require.Equal(t, []string{"No currency printed, CURRENCY is the default: EUR"}, texts(t, doc, "INVOICE_INFO/REMARKS"))
		require.Equal(t, []string{"25.125"}, texts(t, doc, "NET_VALUE_GOODS"), "sum of the line amounts")
		require.Equal(t, []string{"29.895"}, texts(t, doc, "INVOICE_SUMMARY/TOTAL_AMOUNT"), "net + tax")
		require.Equal(t, []string{"supplier"}, texts(t, doc, "INVOICE_ISSUER_IDREF"))
		require.Equal(t, []string{"invoice_recipient"}, texts(t, doc, "INVOICE_RECIPIENT_IDREF"))
		got := read(t, doc)
		require.Equal(t, "", got.Currency, "the default is not what was printed")
		require.Equal(t, order.Totals{NetAmount: "25.125", TaxAmount: "4.77", GrossAmount: "29.895"}, got.Totals)
	})
}

func TestWrite_noItems(t *testing.T) {
	t.Parallel()
	for _, typ := range []order.DocumentType{order.TypeOrder, order.TypeOrderResponse, order.TypeInvoice} {
		t.Run(string(typ), func(t *testing.T) {
			t.Parallel()
			o := fullOrder()
			o.Type, o.NoItems, o.Items = typ, true, nil
			doc, err := opentrans.Marshal(o, testOpts)
			require.NoError(t, err)
			names := map[order.DocumentType][2]string{
				order.TypeOrder:         {"ORDER_ITEM_LIST", "ORDER_SUMMARY"},
				order.TypeOrderResponse: {"ORDERRESPONSE_ITEM_LIST", "ORDERRESPONSE_SUMMARY"},
				order.TypeInvoice:       {"INVOICE_ITEM_LIST", "INVOICE_SUMMARY"},
			}[typ]
			require.Equal(t, []string{""}, texts(t, doc, names[0]), "empty item list")
			require.Equal(t, []string{"0"}, texts(t, doc, names[1]+"/TOTAL_ITEM_NUM"))

			// The empty item list is the only departure from the schema.
			errs := opentranstest.Errors(t, doc)
			require.Len(t, errs, 1, "%v", errs)
			require.Contains(t, errs[0], "Element '{"+opentrans.NamespaceOpenTRANS+"}"+names[0]+"': Missing child element(s)")

			got := read(t, doc)
			require.True(t, got.NoItems)
			require.Empty(t, got.Items)
		})
	}
	t.Run("items are ignored", func(t *testing.T) {
		t.Parallel()
		o := fullOrder()
		o.NoItems = true
		doc, err := opentrans.Marshal(o, testOpts)
		require.NoError(t, err)
		require.Empty(t, texts(t, doc, "ORDER_ITEM"))
		require.Equal(t, []string{"0"}, texts(t, doc, "TOTAL_ITEM_NUM"))
	})
}

func TestWrite_totalItemNum(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 3, 120} {
		o := &order.Order{Type: order.TypeOrder, ID: "X", IssueDate: d(2024, 1, 1)}
		for i := range n {
			o.Items = append(o.Items, order.Item{Position: strings.Repeat("9", i%3+1), Quantity: "1"})
		}
		doc := marshalValid(t, o)
		require.Equal(t, []string{strconv.Itoa(n)}, texts(t, doc, "TOTAL_ITEM_NUM"))
		require.Len(t, texts(t, doc, "ORDER_ITEM"), n)
	}
}

func TestWrite_priceBasis(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		item          order.Item
		priceQuantity []string
		remarks       []string
	}{
		"no basis means 1":    {order.Item{Quantity: "5", UnitPrice: "2.00"}, nil, nil},
		"per 100":             {order.Item{Quantity: "500", UnitPrice: "12.50", PriceBasisQuantity: "100"}, []string{"100"}, nil},
		"explicit 1 is kept":  {order.Item{Quantity: "5", UnitPrice: "2.00", PriceBasisQuantity: "1"}, []string{"1"}, nil},
		"decimal basis":       {order.Item{Quantity: "5", UnitPrice: "2.00", PriceBasisQuantity: "0.5"}, []string{"0.5"}, nil},
		"basis without price": {order.Item{Quantity: "5", PriceBasisQuantity: "100"}, nil, []string{"Price basis quantity: 100"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := &order.Order{Type: order.TypeOrder, ID: "X", IssueDate: d(2024, 1, 1), Items: []order.Item{tt.item}}
			doc := marshalValid(t, o)
			require.Equal(t, tt.priceQuantity, texts(t, doc, "PRICE_QUANTITY"))
			require.Equal(t, tt.remarks, texts(t, doc, "ORDER_ITEM/REMARKS"))
			got := read(t, doc).Items[0]
			require.Equal(t, tt.item.PriceBasisQuantity, got.PriceBasisQuantity)
			require.Equal(t, tt.item.UnitPrice, got.UnitPrice)
		})
	}
}

func TestWrite_units(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		unit     string
		code     string
		remark   []string
		readBack string
	}{
		"Stk.":          {"Stk.", "C62", nil, "C62"},
		"pcs":           {"pcs", "C62", nil, "C62"},
		"kg":            {"kg", "KGM", nil, "KGM"},
		"empty":         {"", "C62", nil, "C62"},
		"code kept":     {"NAR", "NAR", nil, "NAR"},
		"unknown":       {"Bund", "C62", []string{"Printed unit (not in the BMEcat 2005 unit list, ORDER_UNIT is C62): Bund"}, "Bund"},
		"H87 not used":  {"H87", "C62", nil, "C62"},
		"km not listed": {"km", "C62", []string{"Printed unit (not in the BMEcat 2005 unit list, ORDER_UNIT is C62): km"}, "km"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := &order.Order{Type: order.TypeOrder, ID: "X", IssueDate: d(2024, 1, 1),
				Items: []order.Item{{Quantity: "2", Unit: tt.unit, Remarks: []string{"own remark"}}}}
			doc := marshalValid(t, o)
			require.Equal(t, []string{tt.code}, texts(t, doc, "ORDER_UNIT"))
			require.Equal(t, append(tt.remark, "own remark"), texts(t, doc, "ORDER_ITEM/REMARKS"))
			got := read(t, doc).Items[0]
			require.Equal(t, tt.readBack, got.Unit)
			require.Equal(t, []string{"own remark"}, got.Remarks)
		})
	}
}

func TestWrite_currency(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		typ      order.DocumentType
		currency string
		element  []string
		remarks  []string
		readBack string
	}{
		"EUR":                   {order.TypeOrder, "EUR", []string{"EUR"}, nil, "EUR"},
		"lower case":            {order.TypeOrder, "chf", []string{"CHF"}, nil, "CHF"},
		"euro sign":             {order.TypeOrder, "€", []string{"EUR"}, nil, "EUR"},
		"none on an order":      {order.TypeOrder, "", nil, nil, ""},
		"PLN not in 2005 list":  {order.TypeOrder, "PLN", nil, []string{"Printed currency (not in the openTRANS 2.1 currency list): PLN"}, "PLN"},
		"dollar sign ambiguous": {order.TypeOrderResponse, "$", nil, []string{"Printed currency (not in the openTRANS 2.1 currency list): $"}, "$"},
		"invoice PLN":           {order.TypeInvoice, "PLN", []string{"EUR"}, []string{"Printed currency (not in the openTRANS 2.1 currency list): PLN"}, "PLN"},
		"invoice without":       {order.TypeInvoice, "", []string{"EUR"}, []string{"No currency printed, CURRENCY is the default: EUR"}, ""},
		"invoice USD":           {order.TypeInvoice, "USD", []string{"USD"}, nil, "USD"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := &order.Order{Type: tt.typ, ID: "X", IssueDate: d(2024, 1, 1), Currency: tt.currency,
				Items:  []order.Item{{Quantity: "1", UnitPrice: "1", LineAmount: "1"}},
				Totals: order.Totals{NetAmount: "1", GrossAmount: "1.19"}}
			doc := marshalValid(t, o)
			require.Equal(t, tt.element, texts(t, doc, "CURRENCY"))
			var remarks []string
			for _, r := range texts(t, doc, "REMARKS") {
				if strings.Contains(r, "urrency") {
					remarks = append(remarks, r)
				}
			}
			require.Equal(t, tt.remarks, remarks)
			require.Equal(t, tt.readBack, read(t, doc).Currency)
		})
	}
}

// TestWrite_idrefs checks that every IDREF names the PARTY_ID of a PARTY of
// the document that has the referenced role.
func TestWrite_idrefs(t *testing.T) {
	t.Parallel()
	p := func(r order.Role, id string) order.Party {
		return order.Party{Role: r, ID: id, Address: order.Address{Name: string(r) + " " + id}}
	}
	tests := map[string][]order.Party{
		"none":                     nil,
		"without ids":              {{Role: order.RoleBuyer}, {Role: order.RoleDelivery}, {Role: order.RoleSupplier}},
		"generated id is taken":    {p(order.RoleBuyer, "supplier"), {Role: order.RoleSupplier}},
		"same id, different roles": {p(order.RoleBuyer, "123456"), p(order.RoleDelivery, "123456"), p(order.RoleSupplier, "S")},
		"invoice recipient":        {p(order.RoleInvoice, "AP"), p(order.RoleBuyer, "B"), p(order.RoleSupplier, "S")},
		"two deliveries":           {p(order.RoleDelivery, "D1"), p(order.RoleDelivery, "D2")},
		"role outside the list":    {{Role: "carrier", ID: "C"}, p(order.RoleBuyer, "B")},
	}
	refRole := map[string]string{
		"BUYER_IDREF": "buyer", "SUPPLIER_IDREF": "supplier", "DELIVERY_IDREF": "delivery",
		"INVOICE_RECIPIENT_IDREF": "invoice_recipient", "INVOICE_ISSUER_IDREF": "supplier",
	}
	for name, parties := range tests {
		for _, typ := range []order.DocumentType{order.TypeOrder, order.TypeOrderResponse, order.TypeInvoice} {
			t.Run(name+"/"+string(typ), func(t *testing.T) {
				t.Parallel()
				o := &order.Order{Type: typ, ID: "X", IssueDate: d(2024, 1, 1), Currency: "EUR", Parties: parties,
					Items:  []order.Item{{Quantity: "1", UnitPrice: "1", LineAmount: "1"}},
					Totals: order.Totals{NetAmount: "1", GrossAmount: "1"}}
				doc := marshalValid(t, o)
				type party struct{ id, role string }
				var docParties []party
				var cur *party
				refs := 0
				for _, e := range elements(t, doc) {
					switch {
					case strings.HasSuffix(e.path, "/PARTIES/PARTY"):
						docParties = append(docParties, party{})
						cur = &docParties[len(docParties)-1]
					case strings.HasSuffix(e.path, "/PARTY/PARTY_ID"):
						cur.id = e.text
					case strings.HasSuffix(e.path, "/PARTY/PARTY_ROLE"):
						cur.role = e.text
					}
				}
				seen := map[string]bool{}
				for _, e := range elements(t, doc) {
					last := e.path[strings.LastIndex(e.path, "/")+1:]
					role, isRef := refRole[last]
					if !isRef {
						continue
					}
					refs++
					if last == "INVOICE_RECIPIENT_IDREF" && typ == order.TypeInvoice && !seen["INVOICE_RECIPIENT_IDREF"] {
						// An invoice without invoice recipient goes to the buyer.
						if _, ok := o.Party(order.RoleInvoice); !ok {
							role = "buyer"
							if _, ok := o.Party(order.RoleBuyer); !ok {
								role = "invoice_recipient"
							}
						}
					}
					seen[last] = true
					require.Contains(t, docParties, party{id: e.text, role: role}, "%s %q", last, e.text)
				}
				if typ == order.TypeInvoice {
					require.True(t, seen["INVOICE_ISSUER_IDREF"] && seen["INVOICE_RECIPIENT_IDREF"])
				} else {
					require.True(t, seen["BUYER_IDREF"] && seen["SUPPLIER_IDREF"])
				}
				require.Positive(t, refs)

				// The reader resolves by role, so parties sharing an id keep apart.
				got := read(t, doc)
				for _, want := range parties {
					if want.ID != "" {
						require.Contains(t, got.Parties, func() order.Party {
							if want.Role == "carrier" {
								want.Role = "other"
							}
							return want
						}())
					}
				}
			})
		}
	}
}

func TestWrite_escaping(t *testing.T) {
	t.Parallel()
	hostile := "  a<b & c]]>d\x00e\x01\x0c\x1bf\xff\xfeg\uFFFEh\r\ni\tj\"k'l  "
	want := "a<b & c]]>de" + "f\uFFFD\uFFFDgh\r\ni\tj\"k'l"
	o := fullOrder()
	o.ID = hostile
	o.PaymentTerms = hostile
	o.Remarks = []string{hostile, "\x00\x01"}
	o.Parties[0].Address.Name = hostile
	o.Parties[0].Address.Lines = []string{hostile}
	o.Parties[0].VATID = hostile
	o.Items[0].Description = hostile
	o.Items[0].LongDescription = hostile
	o.Items[0].SupplierArticleID = "x]]>&<" + "\x00"
	o.Items[0].Remarks = []string{hostile}
	doc := marshalValid(t, o)
	require.Contains(t, string(doc), "a&lt;b &amp; c]]&gt;d")
	require.NotContains(t, string(doc), "\x00")

	got := read(t, doc)
	require.Equal(t, want, got.ID)
	require.Equal(t, want, got.PaymentTerms)
	require.Equal(t, []string{want}, got.Remarks, "a remark of only control characters is dropped")
	require.Equal(t, want, got.Parties[0].Address.Name)
	require.Equal(t, []string{want}, got.Parties[0].Address.Lines)
	require.Equal(t, want, got.Parties[0].VATID)
	require.Equal(t, want, got.Items[0].Description)
	require.Equal(t, want, got.Items[0].LongDescription)
	require.Equal(t, "x]]>&<", got.Items[0].SupplierArticleID)
	require.Equal(t, []string{want}, got.Items[0].Remarks)
}

func TestWrite_lengthLimits(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("ä", n-1) + "Z" }
	o := fullOrder()
	o.ID = long(300)
	o.Parties[0].Address.Name = long(60)
	o.Parties[0].Address.Zip = long(21)
	o.Parties[0].Address.Street = strings.Repeat("s", 49) + "  Hof 3" // the cut ends in a space
	o.Parties[3].Address.Lines = []string{"short", long(251)}
	o.Items[0].Position = long(51)
	o.Items[0].SupplierArticleID = long(33)
	o.Items[0].Description = long(151)
	doc := marshalValid(t, o)

	for path, n := range map[string]int{"ORDER_INFO/ORDER_ID": 250, "ADDRESS/NAME": 50, "ADDRESS/ZIP": 20,
		"LINE_ITEM_ID": 50, "SUPPLIER_PID": 32, "DESCRIPTION_SHORT": 150} {
		v := texts(t, doc, path)[0]
		require.Equal(t, strings.Repeat("ä", n), v, path)
	}
	require.Equal(t, []string{"short", strings.Repeat("ä", 250)}, texts(t, doc, "PARTY/ADDRESS/ADDRESS_REMARKS"))
	require.Contains(t, string(doc), "<bmecat:STREET>"+strings.Repeat("s", 49)+"</bmecat:STREET>")
	require.Contains(t, texts(t, doc, "ORDER_INFO/REMARKS"), "Full value of bmecat:NAME of PARTY 1: "+long(60))
	require.Contains(t, texts(t, doc, "ORDER_ITEM/REMARKS"), "Full value of bmecat:SUPPLIER_PID: "+long(33))
	require.Equal(t, o, read(t, doc), "notes restore the full values")
}

func TestWrite_codes(t *testing.T) {
	t.Parallel()
	o := fullOrder()
	o.Language = "Klingon"
	o.Parties[0].Address.CountryCoded = "RS" // Serbia: not in the 2005 list
	o.Parties[1].Address.CountryCoded = "ch"
	o.Parties[1].IDType = "kunden-nr"
	doc := marshalValid(t, o)
	require.Empty(t, texts(t, doc, "LANGUAGE"))
	require.Equal(t, []string{"CH", "DE"}, texts(t, doc, "COUNTRY_CODED"))
	require.Equal(t, []string{"supplier_specific", "kundennr", "supplier_specific", ""}, attrs(t, doc, "PARTY/PARTY_ID", "type"))
	remarks := texts(t, doc, "ORDER_INFO/REMARKS")
	require.Contains(t, remarks, "Printed language (not in the BMEcat language list): Klingon")
	require.Contains(t, remarks, "Printed country code (not in the BMEcat country list) of PARTY 1: RS")
	got := read(t, doc)
	require.Equal(t, "Klingon", got.Language)
	require.Equal(t, "RS", got.Parties[0].Address.CountryCoded)
	require.Equal(t, "CH", got.Parties[1].Address.CountryCoded)
}

func TestWrite_noDate(t *testing.T) {
	t.Parallel()
	o := fullOrder()
	o.IssueDate = order.Date{}
	doc := marshalValid(t, o)
	require.Equal(t, []string{"2024-05-13"}, texts(t, doc, "ORDER_DATE"), "ORDER_DATE is mandatory: processing date")
	require.Contains(t, texts(t, doc, "ORDER_INFO/REMARKS"),
		"No document date printed, the date written is the processing date: 2024-05-13")
	require.Equal(t, o, read(t, doc))
}

func TestWrite_remarkLooksLikeNote(t *testing.T) {
	t.Parallel()
	o := fullOrder()
	o.PaymentTerms = ""
	o.Remarks = []string{"Tax amount: 1", "Payment terms: sofort", "Payment terms: twice"}
	doc := marshalValid(t, o)
	got := read(t, doc)
	// "Net amount" and "Tax amount" are real notes; the remarks come after
	// them, "Tax amount: 1" repeats a label and so ends the notes.
	require.Equal(t, o.Remarks, got.Remarks)
	require.Equal(t, "", got.PaymentTerms)
	again, err := opentrans.Marshal(got, testOpts)
	require.NoError(t, err)
	require.Equal(t, string(doc), string(again))
}

func TestWrite_errors(t *testing.T) {
	t.Parallel()
	item := order.Item{Quantity: "1", UnitPrice: "1", LineAmount: "1"}
	base := func(f func(o *order.Order)) *order.Order {
		o := &order.Order{Type: order.TypeOrder, ID: "X", IssueDate: d(2024, 1, 1), Items: []order.Item{item},
			Totals: order.Totals{NetAmount: "1", GrossAmount: "1"}}
		f(o)
		return o
	}
	tests := map[string]struct {
		o    *order.Order
		opts opentrans.WriteOptions
		msg  string
	}{
		"nil order":           {o: nil, msg: "no order"},
		"unknown type":        {o: base(func(o *order.Order) { o.Type = "quotation" }), msg: "quotation"},
		"no id":               {o: base(func(o *order.Order) { o.ID = " \x00 " }), msg: "ORDER_ID is missing"},
		"no invoice id":       {o: base(func(o *order.Order) { o.Type, o.ID = order.TypeInvoice, "" }), msg: "INVOICE_ID is missing"},
		"no items":            {o: base(func(o *order.Order) { o.Items = nil }), msg: "no items"},
		"decimal comma":       {o: base(func(o *order.Order) { o.Items[0].Quantity = "1,5" }), msg: `QUANTITY "1,5"`},
		"no quantity":         {o: base(func(o *order.Order) { o.Items[0].Quantity = "" }), msg: "QUANTITY is missing"},
		"thousands separator": {o: base(func(o *order.Order) { o.Totals.GrossAmount = "1.234,00" }), msg: "TOTAL_AMOUNT"},
		"25 digits":           {o: base(func(o *order.Order) { o.Items[0].LineAmount = strings.Repeat("9", 25) }), msg: "PRICE_LINE_AMOUNT"},
		"february 30":         {o: base(func(o *order.Order) { o.IssueDate = d(2024, 2, 30) }), msg: "ORDER_DATE 2024-02-30"},
		"year 10000":          {o: base(func(o *order.Order) { o.Items[0].DeliveryDate = d(10000, 1, 1) }), msg: "DELIVERY_DATE"},
		"invoice without price": {o: base(func(o *order.Order) {
			o.Type = order.TypeInvoice
			o.Items[0].UnitPrice = ""
		}), msg: "unit price"},
		"invoice without totals": {o: base(func(o *order.Order) {
			o.Type, o.NoItems, o.Totals = order.TypeInvoice, true, order.Totals{}
		}), msg: "net total"},
		"bad default currency": {o: base(func(*order.Order) {}), opts: opentrans.WriteOptions{DefaultCurrency: "XXX"}, msg: "XXX"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			err := opentrans.Write(&buf, tt.o, tt.opts)
			require.Error(t, err)
			require.Equal(t, document.EINVALID, document.ErrorKind(err))
			require.Contains(t, err.Error(), tt.msg)
			require.Zero(t, buf.Len(), "nothing written on error")
		})
	}
}

// Document charges, allowances and charges after tax have no ORDER element:
// they travel as notes and read back into the model.
func TestWrite_chargesAsNotes(t *testing.T) {
	t.Parallel()
	o := fullOrder()
	o.Totals.LinesAmount, o.Totals.Charges, o.Totals.Allowances, o.Totals.ExtraCharges = "169.95", "10.00", "10.00", "24"
	doc := marshalValid(t, o)
	require.Equal(t, []string{
		"Payment terms: 30 Tage netto, 14 Tage 2 % Skonto",
		"Net amount: 169.95",
		"Tax amount: 32.29",
		"Total of the line amounts: 169.95",
		"Charges in the net amount: 10.00",
		"Allowances in the net amount: 10.00",
		"Charges after tax: 24",
		"Bitte Bestellnummer auf Lieferschein angeben",
	}, texts(t, doc, "ORDER_INFO/REMARKS"))
	require.Equal(t, o, read(t, doc), "model -> XML -> model")
}
