package opentrans_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
)

// sharedDocuments lists every XML file under ../shared/opentrans/samples and
// examples.
func sharedDocuments(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(opentranstest.SharedDir(t), "opentrans")
	var files []string
	for _, dir := range []string{"samples", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".xml") {
				files = append(files, p)
			}
			return err
		})
		require.NoError(t, err)
	}
	require.NotEmpty(t, files)
	return files
}

// TestRead_sharedDocuments parses every shared sample and example: ORDER,
// ORDERRESPONSE and INVOICE into the model, other types with ErrUnsupported.
// Each parsed document written again is valid and reads back the same.
func TestRead_sharedDocuments(t *testing.T) {
	t.Parallel()
	for _, f := range sharedDocuments(t) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			o, err := opentrans.Read(bytes.NewReader(raw))
			root := rootName(t, raw)
			switch root {
			case "ORDER", "ORDERRESPONSE", "INVOICE":
				require.NoError(t, err)
			default:
				require.ErrorIs(t, err, opentrans.ErrUnsupported, root)
				require.Equal(t, document.EINVALID, document.ErrorKind(err))
				return
			}
			require.NotEmpty(t, o.ID)
			require.False(t, o.IssueDate.IsZero())
			require.Len(t, o.Items, len(texts(t, raw, root+"_ITEM_LIST/"+root+"_ITEM")))

			doc, err := opentrans.Marshal(o, testOpts)
			require.NoError(t, err)
			opentranstest.Validate(t, doc)
			again := read(t, doc)
			// The writer adds the parties the document type needs but the
			// file lacks (some samples reference parties they never define).
			for len(again.Parties) > len(o.Parties) {
				added := again.Parties[len(again.Parties)-1]
				require.Equal(t, order.Party{Role: added.Role, ID: string(added.Role)}, added)
				again.Parties = again.Parties[:len(again.Parties)-1]
			}
			require.Equal(t, o, again)
		})
	}
}

func rootName(t *testing.T, raw []byte) string {
	t.Helper()
	root := elements(t, raw)[0].path
	if root == "OPENTRANS" {
		root = elements(t, raw)[1].path[len("OPENTRANS/"):]
	}
	return root
}

// TestRead_partnerOrder checks values of a realistic distributor order
// (naugrimm Example_ORDER_Testdistributor_Bestellung.xml) as the file states
// them: bme: prefix, buyer and delivery sharing one PARTY_ID, comments,
// several INTERNATIONAL_PIDs.
func TestRead_partnerOrder(t *testing.T) {
	t.Parallel()
	f := filepath.Join(opentranstest.SharedDir(t), "opentrans", "samples", "naugrimm", "tests", "assets",
		"Examples", "Order", "Example_ORDER_Testdistributor_Bestellung.xml")
	raw, err := os.ReadFile(f)
	require.NoError(t, err)
	o, err := opentrans.Read(bytes.NewReader(raw))
	require.NoError(t, err)

	require.Equal(t, order.TypeOrder, o.Type)
	require.Equal(t, "ORDER_180801-004", o.ID)
	require.Equal(t, d(2018, 8, 1), o.IssueDate)
	require.Equal(t, "EUR", o.Currency)
	require.Equal(t, "deu", o.Language)
	require.Equal(t, []string{"hier ist ein Kommentar"}, o.Remarks)

	buyer, ok := o.Party(order.RoleBuyer)
	require.True(t, ok)
	require.Equal(t, "123456", buyer.ID)
	require.Equal(t, "supplier_specific", buyer.IDType)
	require.Equal(t, "ITscope GmbH", buyer.Address.Name)
	require.Equal(t, "ITscope Support", buyer.Address.Contact)
	require.Equal(t, "+49 721/6273760", buyer.Address.Phone)
	require.Equal(t, "support@itscope.com", buyer.Address.Email)
	delivery, ok := o.Party(order.RoleDelivery)
	require.True(t, ok)
	require.Equal(t, "123456", delivery.ID)
	require.Equal(t, "5 Stock", delivery.Address.Name2)
	supplier, ok := o.Party(order.RoleSupplier)
	require.True(t, ok)
	require.Equal(t, "10000735", supplier.ID)
	require.Equal(t, "Ludwig-Erhard-Allee 20", supplier.Address.Street)
	require.Equal(t, "76131", supplier.Address.Zip)
	require.Equal(t, "Karlsruhe", supplier.Address.City)
	require.Equal(t, "Deutschland", supplier.Address.Country)
	require.Equal(t, "DE", supplier.Address.CountryCoded)

	it := o.Items[0]
	require.Equal(t, "00001", it.Position)
	require.Equal(t, "123002", it.SupplierArticleID)
	require.Equal(t, "0190198870803", it.EAN, "the ean, not the itscope id")
	require.Equal(t, `APPLE iPad Pro Wi-Fi 256 GB Grau - 11" Tablet - 27,9cm-Display`, it.Description)
	require.Equal(t, "1.0", it.Quantity)
	require.Equal(t, "C62", it.Unit)
	require.Equal(t, "868.0", it.UnitPrice)
	require.Equal(t, "868.0", it.LineAmount)
	require.Equal(t, []string{"Projekt ABC-123"}, it.Remarks)
}

func TestRead_errors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		doc         string
		unsupported bool
		msg         string
	}{
		"empty":          {doc: "", msg: "well-formed"},
		"not xml":        {doc: "%PDF-1.7", msg: "well-formed"},
		"truncated":      {doc: `<ORDER version="2.1"><ORDER_HEADER>`, msg: "well-formed"},
		"dispatch note":  {doc: `<DISPATCHNOTIFICATION version="2.1"/>`, unsupported: true, msg: "DISPATCHNOTIFICATION"},
		"wrapped change": {doc: `<OPENTRANS><ORDERCHANGE version="2.1"/></OPENTRANS>`, unsupported: true, msg: "ORDERCHANGE"},
		"decimal comma": {doc: `<ORDER><ORDER_ITEM_LIST><ORDER_ITEM><LINE_ITEM_ID>1</LINE_ITEM_ID>
			<QUANTITY>1,5</QUANTITY></ORDER_ITEM></ORDER_ITEM_LIST></ORDER>`, msg: `QUANTITY "1,5"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := opentrans.Read(strings.NewReader(tt.doc))
			require.Error(t, err)
			require.Equal(t, document.EINVALID, document.ErrorKind(err))
			require.Equal(t, tt.unsupported, errors.Is(err, opentrans.ErrUnsupported))
			require.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestRead_lenient(t *testing.T) {
	t.Parallel()
	// No namespaces, an OPENTRANS envelope, a PARTY without PARTY_ROLE found
	// through its IDREF, xsd:decimal spellings, TAX as a factor, a date-time.
	doc := `<?xml version="1.0"?>
<OPENTRANS><ORDERRESPONSE version="2.1"><ORDERRESPONSE_HEADER><ORDERRESPONSE_INFO>
  <ORDER_ID> 4500 </ORDER_ID><ORDERRESPONSE_DATE>2024-05-14T23:30:00-05:00</ORDERRESPONSE_DATE>
  <PARTIES><PARTY><PARTY_ID type="gln">4000001000005</PARTY_ID><PARTY_ID>B</PARTY_ID></PARTY>
    <PARTY><PARTY_ID>S</PARTY_ID><PARTY_ROLE>supplier</PARTY_ROLE><PARTY_ROLE>invoice_issuer</PARTY_ROLE></PARTY></PARTIES>
  <ORDER_PARTIES_REFERENCE><BUYER_IDREF>B</BUYER_IDREF><SUPPLIER_IDREF>S</SUPPLIER_IDREF></ORDER_PARTIES_REFERENCE>
</ORDERRESPONSE_INFO></ORDERRESPONSE_HEADER>
<ORDERRESPONSE_ITEM_LIST><ORDERRESPONSE_ITEM><LINE_ITEM_ID>1</LINE_ITEM_ID><PRODUCT_ID/>
  <QUANTITY>+2.</QUANTITY><ORDER_UNIT>PK</ORDER_UNIT>
  <PRODUCT_PRICE_FIX><PRICE_AMOUNT>.5</PRICE_AMOUNT><TAX_DETAILS_FIX><TAX>0.07</TAX></TAX_DETAILS_FIX></PRODUCT_PRICE_FIX>
  <DELIVERY_DATE><DELIVERY_START_DATE>2024-06-01</DELIVERY_START_DATE><DELIVERY_END_DATE>2024-06-07</DELIVERY_END_DATE></DELIVERY_DATE>
</ORDERRESPONSE_ITEM></ORDERRESPONSE_ITEM_LIST>
<ORDERRESPONSE_SUMMARY><TOTAL_ITEM_NUM>1</TOTAL_ITEM_NUM></ORDERRESPONSE_SUMMARY></ORDERRESPONSE></OPENTRANS>`
	o, err := opentrans.Read(strings.NewReader(doc))
	require.NoError(t, err)
	require.Equal(t, &order.Order{
		Type: order.TypeOrderResponse, ID: "4500", IssueDate: d(2024, 5, 14),
		Parties: []order.Party{
			{Role: order.RoleBuyer, ID: "B"},
			{Role: order.RoleSupplier, ID: "S"},
			{Role: "invoice_issuer", ID: "S"},
		},
		Items: []order.Item{{Position: "1", Quantity: "2", Unit: "PK", UnitPrice: "0.5", TaxRate: "7",
			DeliveryDate: d(2024, 6, 7)}},
	}, o)
}

func TestRead_charsets(t *testing.T) {
	t.Parallel()
	doc := func(encoding string, name []byte) []byte {
		return append(append([]byte(`<?xml version="1.0" encoding="`+encoding+`"?><ORDER><ORDER_HEADER><ORDER_INFO>`+
			`<ORDER_ID>1</ORDER_ID><PARTIES><PARTY><PARTY_ID>B</PARTY_ID><PARTY_ROLE>buyer</PARTY_ROLE>`+
			`<ADDRESS><NAME>`), name...), []byte(`</NAME></ADDRESS></PARTY></PARTIES></ORDER_INFO></ORDER_HEADER></ORDER>`)...)
	}
	tests := map[string]struct {
		doc  []byte
		name string
	}{
		"utf-8":                     {doc("UTF-8", []byte("Müller €")), "Müller €"},
		"latin-1":                   {doc("ISO-8859-1", []byte{'M', 0xFC, 'l', 'l', 'e', 'r'}), "Müller"},
		"latin-1 label, utf-8 body": {doc("ISO-8859-1", []byte("Müller")), "Müller"},
		"windows-1252 euro":         {doc("windows-1252", []byte{'5', ' ', 0x80}), "5 €"},
		"latin-9 euro":              {doc("ISO-8859-15", []byte{'5', ' ', 0xA4}), "5 €"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o := read(t, tt.doc)
			require.Equal(t, tt.name, o.Parties[0].Address.Name)
		})
	}
	_, err := opentrans.Read(bytes.NewReader(doc("EBCDIC-US", []byte("x"))))
	require.Error(t, err)
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
}
