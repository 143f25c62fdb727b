package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/embedded/embeddedtest"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/template"
)

// x is an XPath step by local name, so that queries need no namespace
// bindings: x("ExchangedDocument", "ID") = /*[local-name()='ExchangedDocument']/*[local-name()='ID'].
func x(steps ...string) string {
	var b strings.Builder
	for _, s := range steps {
		name, pred, _ := strings.Cut(s, "[")
		fmt.Fprintf(&b, "/*[local-name()='%s']", name)
		if pred != "" {
			b.WriteString("[" + pred)
		}
	}
	return b.String()
}

// ciiDate renders a udt:DateTimeString (format 102 or 203: the date is its
// first eight digits) as YYYY-MM-DD.
func ciiDate(s string) string {
	if len(s) < 8 {
		return ""
	}
	return s[:4] + "-" + s[4:6] + "-" + s[6:8]
}

func deployTemplates(t *testing.T) *template.Set {
	t.Helper()
	set, err := template.Load(filepath.Join(repotest.Root(t), "deploy", "templates"))
	require.NoError(t, err)
	return set
}

func orderX(t *testing.T) (pdf, xml []byte) {
	t.Helper()
	file := embeddedtest.Corpus(t, "orders", "orderx-ex01-order-comfort.pdf")
	pdf, err := os.ReadFile(file)
	require.NoError(t, err)
	return pdf, embeddedtest.Detach(t, file, 1)
}

// TestOrderXCorpus: the Order-X example gives an openTRANS ORDER whose values
// equal its XML's. Expected values are read from the attachment with
// xmllint (pdfdetach extracts it), the result with xmllint too: pkg/embedded's
// reader and mapper are not involved on the expectation side.
func TestOrderXCorpus(t *testing.T) {
	pdf, src := orderX(t)
	ctx := context.Background()
	found, err := embedded.Find(ctx, pdf, embedded.Limits{})
	require.NoError(t, err)
	d := found.Document
	require.NotNil(t, d)
	require.Equal(t, "embedded Order-X COMFORT (order-x.xml)", d.Source())
	require.Equal(t, embedded.KindOrder, d.Kind)

	run, err := deployTemplates(t).RunStructured(ctx, d.Structured(), template.RunOptions{PartyID: "EMBEDDED"})
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	out, err := opentrans.Marshal(run.Order, opentrans.WriteOptions{})
	require.NoError(t, err)
	opentranstest.Validate(t, out)

	s := func(path string) string { return embeddedtest.XPath(t, src, path) }
	o := func(path string) string { return embeddedtest.XPath(t, out, path) }
	root := x("SCRDMCCBDACIOMessageStructure")
	tx := root + x("SupplyChainTradeTransaction")
	info := x("ORDER", "ORDER_HEADER", "ORDER_INFO")

	require.Equal(t, "PO123456789", o(info+x("ORDER_ID")), "hand-checked")
	require.Equal(t, s(root+x("ExchangedDocument", "ID")), o(info+x("ORDER_ID")))
	require.Equal(t, ciiDate(s(root+x("ExchangedDocument", "IssueDateTime", "DateTimeString"))), o(info+x("ORDER_DATE")))
	require.Equal(t, s(tx+x("ApplicableHeaderTradeSettlement", "OrderCurrencyCode")), o(info+x("CURRENCY")))
	require.Equal(t, ciiDate(s(tx+x("ApplicableHeaderTradeDelivery", "RequestedDeliverySupplyChainEvent", "OccurrenceDateTime", "DateTimeString"))),
		o(info+x("DELIVERY_DATE", "DELIVERY_START_DATE")))

	parties := []struct{ src, role string }{
		{tx + x("ApplicableHeaderTradeAgreement", "BuyerTradeParty"), "buyer"},
		{tx + x("ApplicableHeaderTradeAgreement", "SellerTradeParty"), "supplier"},
		{tx + x("ApplicableHeaderTradeDelivery", "ShipToTradeParty"), "delivery"},
		{tx + x("ApplicableHeaderTradeSettlement", "InvoiceeTradeParty"), "invoice_recipient"},
	}
	for _, p := range parties {
		party := info + x("PARTIES", "PARTY[*[local-name()='PARTY_ROLE']='"+p.role+"']")
		addr := party + x("ADDRESS")
		require.NotEmpty(t, o(party+x("PARTY_ID")), p.role)
		require.Equal(t, s(p.src+x("ID")), o(party+x("PARTY_ID[1]")), p.role)
		require.Equal(t, s(p.src+x("Name")), o(addr+x("NAME")), p.role)
		require.Equal(t, s(p.src+x("SpecifiedTaxRegistration", "ID[@schemeID='VA']")), o(addr+x("VAT_ID")), p.role)
		require.Equal(t, s(p.src+x("PostalTradeAddress", "PostcodeCode")), o(addr+x("ZIP")), p.role)
		require.Equal(t, s(p.src+x("PostalTradeAddress", "CityName")), o(addr+x("CITY")), p.role)
		require.Equal(t, s(p.src+x("PostalTradeAddress", "CountryID")), o(addr+x("COUNTRY_CODED")), p.role)
		require.Contains(t, o(addr+x("STREET")), s(p.src+x("PostalTradeAddress", "LineOne")), p.role)
		require.Equal(t, s(p.src+x("DefinedTradeContact", "PersonName")), o(addr+x("CONTACT_DETAILS", "CONTACT_NAME")), p.role)
		require.Equal(t, s(p.src+x("DefinedTradeContact", "EmailURIUniversalCommunication", "URIID")), o(addr+x("EMAIL")), p.role)
		require.Equal(t, s(p.src+x("DefinedTradeContact", "TelephoneUniversalCommunication", "CompleteNumber")), o(addr+x("PHONE")), p.role)
		// The GLN and the legal registration are further PARTY_IDs.
		gln := s(p.src + x("GlobalID[@schemeID='0088']"))
		require.NotEmpty(t, gln, p.role)
		require.Equal(t, gln, o(party+x("PARTY_ID[@type='gln']")), p.role)
		require.Equal(t, s(p.src+x("SpecifiedLegalOrganization", "ID")), o(party+x("PARTY_ID[@type='party_specific']")), p.role)
	}

	n := s("count(" + tx + x("IncludedSupplyChainTradeLineItem") + ")")
	require.Equal(t, "3", n, "hand-checked: three lines")
	require.Equal(t, n, o("count("+x("ORDER", "ORDER_ITEM_LIST", "ORDER_ITEM")+")"))
	require.Equal(t, n, o(x("ORDER", "ORDER_SUMMARY", "TOTAL_ITEM_NUM")))
	for i := 1; i <= 3; i++ {
		li := fmt.Sprintf("%s%s[%d]", tx, x("IncludedSupplyChainTradeLineItem"), i)
		it := fmt.Sprintf("%s[%d]", x("ORDER", "ORDER_ITEM_LIST", "ORDER_ITEM"), i)
		msg := fmt.Sprintf("line %d", i)
		require.Equal(t, s(li+x("AssociatedDocumentLineDocument", "LineID")), o(it+x("LINE_ITEM_ID")), msg)
		require.Equal(t, s(li+x("SpecifiedTradeProduct", "SellerAssignedID")), o(it+x("PRODUCT_ID", "SUPPLIER_PID")), msg)
		require.Equal(t, s(li+x("SpecifiedTradeProduct", "BuyerAssignedID")), o(it+x("PRODUCT_ID", "BUYER_PID")), msg)
		require.Equal(t, s(li+x("SpecifiedTradeProduct", "GlobalID[@schemeID='0160']")), o(it+x("PRODUCT_ID", "INTERNATIONAL_PID")), msg)
		require.Equal(t, s(li+x("SpecifiedTradeProduct", "Name")), o(it+x("PRODUCT_ID", "DESCRIPTION_SHORT")), msg)
		require.Equal(t, s(li+x("SpecifiedTradeProduct", "Description")), o(it+x("PRODUCT_ID", "DESCRIPTION_LONG")), msg)
		require.Equal(t, s(li+x("SpecifiedLineTradeDelivery", "RequestedQuantity")), o(it+x("QUANTITY")), msg)
		require.Equal(t, s(li+x("SpecifiedLineTradeDelivery", "RequestedQuantity")+"/@unitCode"), o(it+x("ORDER_UNIT")), msg)
		require.Equal(t, s(li+x("SpecifiedLineTradeAgreement", "NetPriceProductTradePrice", "ChargeAmount")), o(it+x("PRODUCT_PRICE_FIX", "PRICE_AMOUNT")), msg)
		require.Equal(t, s(li+x("SpecifiedLineTradeAgreement", "NetPriceProductTradePrice", "BasisQuantity")), o(it+x("PRODUCT_PRICE_FIX", "PRICE_QUANTITY")), msg)
		require.Equal(t, s(li+x("SpecifiedLineTradeSettlement", "SpecifiedTradeSettlementLineMonetarySummation", "LineTotalAmount")), o(it+x("PRICE_LINE_AMOUNT")), msg)
		want := s(li + x("SpecifiedLineTradeDelivery", "RequestedDeliverySupplyChainEvent", "OccurrenceDateTime", "DateTimeString"))
		if want == "" {
			want = s(li + x("SpecifiedLineTradeDelivery", "RequestedDeliverySupplyChainEvent", "OccurrenceSpecifiedPeriod", "StartDateTime", "DateTimeString"))
		}
		require.NotEmpty(t, want, msg)
		require.Equal(t, ciiDate(want), o(it+x("DELIVERY_DATE", "DELIVERY_START_DATE")), msg)
	}
	// Hand-checked against the printed order: line 2's price is per 2 units.
	require.Equal(t, "20.00", o(x("ORDER", "ORDER_ITEM_LIST", "ORDER_ITEM")+"[2]"+x("PRODUCT_PRICE_FIX", "PRICE_AMOUNT")))
	require.Equal(t, "2", o(x("ORDER", "ORDER_ITEM_LIST", "ORDER_ITEM")+"[2]"+x("PRODUCT_PRICE_FIX", "PRICE_QUANTITY")))

	sum := tx + x("ApplicableHeaderTradeSettlement", "SpecifiedTradeSettlementHeaderMonetarySummation")
	require.Equal(t, s(sum+x("GrandTotalAmount")), o(x("ORDER", "ORDER_SUMMARY", "TOTAL_AMOUNT")))
	remarks := o("string-join(" + info + x("REMARKS") + ", '|')")
	if remarks == "" { // xmllint has XPath 1.0 only: read them one by one
		var rs []string
		for i := 1; ; i++ {
			r := o(fmt.Sprintf("%s[%d]", info+x("REMARKS"), i))
			if r == "" {
				break
			}
			rs = append(rs, r)
		}
		remarks = strings.Join(rs, "|")
	}
	require.Contains(t, remarks, "Net amount: "+s(sum+x("TaxBasisTotalAmount")))
	require.Contains(t, remarks, "Tax amount: "+s(sum+x("TaxTotalAmount")))
	require.Contains(t, remarks, "Payment terms: "+s(tx+x("ApplicableHeaderTradeSettlement", "SpecifiedTradePaymentTerms", "Description")))
	require.Contains(t, remarks, "Buyer reference: "+s(tx+x("ApplicableHeaderTradeAgreement", "BuyerReference")))
	require.Contains(t, remarks, s(root+x("ExchangedDocument", "IncludedNote", "Content")))
	// Header allowances and charges explain why the lines (310.00) exceed
	// the net total (300.00).
	require.Contains(t, remarks, "Allowance "+s(sum+x("AllowanceTotalAmount")))
	require.Contains(t, remarks, "Charge "+s(sum+x("ChargeTotalAmount")))
}

// TestOrderXMessageTypes: the order change (230) and the order response
// (231) become XSD-valid ORDERCHANGE and ORDERRESPONSE documents.
func TestOrderXMessageTypes(t *testing.T) {
	_, src := orderX(t)
	for _, tc := range []struct {
		code, root string
		kind       embedded.Kind
		typ        order.DocumentType
	}{
		{"230", "ORDERCHANGE", embedded.KindOrderChange, order.TypeOrderChange},
		{"231", "ORDERRESPONSE", embedded.KindOrderResponse, order.TypeOrderResponse},
	} {
		t.Run(tc.code, func(t *testing.T) {
			xml := strings.Replace(string(src), "<ram:TypeCode>220</ram:TypeCode>", "<ram:TypeCode>"+tc.code+"</ram:TypeCode>", 1)
			require.NotEqual(t, string(src), xml)
			d, err := embedded.Recognise(context.Background(), "order-x.xml", []byte(xml))
			require.NoError(t, err)
			require.Equal(t, tc.kind, d.Kind)
			require.Equal(t, tc.typ, d.Order.Type)
			out, err := opentrans.Marshal(d.Order, opentrans.WriteOptions{})
			require.NoError(t, err)
			opentranstest.Validate(t, out)
			require.Equal(t, "PO123456789", embeddedtest.XPath(t, out, x(tc.root, tc.root+"_HEADER", tc.root+"_INFO", "ORDER_ID")))
			require.Equal(t, "3", embeddedtest.XPath(t, out, x(tc.root, tc.root+"_SUMMARY", "TOTAL_ITEM_NUM")))
		})
	}
}

// corpusInvoices are the invoices of ../shared/corpus/other with what their
// attachment is (hand-checked with pdfdetach and the XML roots and
// guidelines).
var corpusInvoices = []struct{ file, standard string }{
	{"facturx-invoice-en16931.pdf", embedded.StandardEN16931},
	{"mustang-en16931-einfach.pdf", embedded.StandardEN16931},
	{"mustang-facture-f20180027.pdf", embedded.StandardEN16931},
	{"mustang-invoice-103767.pdf", embedded.StandardEN16931},
	{"mustang-rechnung-20170509-505.pdf", embedded.StandardZUGFeRD1},
}

// TestInvoicesRejectedByOrderTemplates: every invoice of the corpus is
// recognised as one and rejected not_an_order by every order template,
// whatever its printed text says.
func TestInvoicesRejectedByOrderTemplates(t *testing.T) {
	set := deployTemplates(t)
	files, err := filepath.Glob(filepath.Join(embeddedtest.Corpus(t, "other"), "*.pdf"))
	require.NoError(t, err)
	require.Len(t, files, len(corpusInvoices), "a new invoice in corpus/other: add it to corpusInvoices")
	for _, ci := range corpusInvoices {
		pdf, err := os.ReadFile(embeddedtest.Corpus(t, "other", ci.file))
		require.NoError(t, err)
		found, err := embedded.Find(context.Background(), pdf, embedded.Limits{})
		require.NoError(t, err)
		require.NotNil(t, found.Document, ci.file)
		require.Equal(t, embedded.KindInvoice, found.Document.Kind, ci.file)
		require.Equal(t, ci.standard, found.Document.Standard, ci.file)
		n := 0
		for _, tpl := range set.Templates() {
			if tpl.DocIntake.DocumentType != order.TypeOrder {
				continue
			}
			n++
			run, err := set.RunStructured(context.Background(), found.Document.Structured(), template.RunOptions{Template: tpl.Name})
			require.NoError(t, err)
			require.Equal(t, template.OutcomeRejected, run.Outcome.Status, "%s with %s", ci.file, tpl.Name)
			require.Equal(t, document.ReasonNotAnOrder, run.Outcome.Reason, "%s with %s", ci.file, tpl.Name)
		}
		require.GreaterOrEqual(t, n, 3, "contoso-po, orderx-comfort, embedded")
	}
}

func contoso(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(embeddedtest.Corpus(t, "orders", "contoso-po-Adatum-Adel.pdf"))
	require.NoError(t, err)
	return b
}

// TestHostileXML: DTDs (entity expansion, external entities), undeclared
// entities, deep nesting and element floods are refused by the reader.
func TestHostileXML(t *testing.T) {
	for name, data := range embeddedtest.Hostile() {
		t.Run(name, func(t *testing.T) {
			d, err := embedded.Recognise(context.Background(), name, data)
			require.Error(t, err)
			require.Nil(t, d)
			if name != "undeclared-entity.xml" {
				require.ErrorIs(t, err, embedded.ErrHostile)
			}
			require.NotContains(t, err.Error(), "root:", "no file content leaks into the error")
		})
	}
}

// TestHostileAttachments: hostile attachments in a real PDF leave no
// structured document (the text decides), are reported, and the size and
// count caps hold.
func TestHostileAttachments(t *testing.T) {
	files := embeddedtest.Hostile()
	files["bomb.xml"] = embeddedtest.Bomb(4 << 20)
	names := []string{"bomb.xml", "deep-nesting.xml", "entity-expansion.xml", "external-entity.xml", "many-elements.xml", "undeclared-entity.xml"}
	pdf := embeddedtest.Attach(t, contoso(t), names, files)
	found, err := embedded.Find(context.Background(), pdf, embedded.Limits{MaxBytes: 3 << 20, MaxCount: 5})
	require.NoError(t, err)
	require.Nil(t, found.Document)
	require.Len(t, found.Attachments, len(names))
	results := map[string]string{}
	for _, n := range found.Attachments {
		results[n.File] = n.Result
	}
	require.Contains(t, results["bomb.xml"], "skipped: larger than 3145728 bytes")
	require.Contains(t, results["deep-nesting.xml"], "nesting deeper than")
	require.Contains(t, results["entity-expansion.xml"], "DOCTYPE")
	require.Contains(t, results["external-entity.xml"], "DOCTYPE")
	require.Contains(t, results["many-elements.xml"], "more than 500000 elements")
	require.Contains(t, results["undeclared-entity.xml"], "skipped: beyond the first 5 attachments")
}

// TestFindPrefersOrders: an Order-X attachment added to a Contoso PO is
// found, and is the document whatever else is attached (an invoice, text).
func TestFindPrefersOrders(t *testing.T) {
	_, src := orderX(t)
	inv := embeddedtest.Detach(t, embeddedtest.Corpus(t, "other", "mustang-invoice-103767.pdf"), 1)
	pdf := embeddedtest.Attach(t, contoso(t), []string{"factur-x.xml", "readme.txt", "order.xml"},
		map[string][]byte{"factur-x.xml": inv, "readme.txt": []byte("not xml"), "order.xml": src})
	found, err := embedded.Find(context.Background(), pdf, embedded.Limits{})
	require.NoError(t, err)
	require.NotNil(t, found.Document)
	require.Equal(t, "embedded Order-X COMFORT (order.xml)", found.Document.Source())
	require.Equal(t, "PO123456789", found.Document.Order.ID)
}

// TestMalformedPDFs: the hostile PDFs of the corpus give an error or no
// attachment, within the deadline, never a panic.
func TestMalformedPDFs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(embeddedtest.Corpus(t, "malformed"), "*.pdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		pdf, err := os.ReadFile(f)
		require.NoError(t, err)
		found, err := embedded.Find(context.Background(), pdf, embedded.Limits{Timeout: 30 * time.Second})
		if err != nil {
			require.Truef(t, errors.Is(err, embedded.ErrUnreadable) || errors.Is(err, embedded.ErrTimeout), "%s: %v", filepath.Base(f), err)
			continue
		}
		require.Nil(t, found.Document, filepath.Base(f))
	}
}

// TestNoAttachments: POs without attachments (object streams or not) give
// none, and no error.
func TestNoAttachments(t *testing.T) {
	for _, f := range [][2]string{{"orders", "contoso-po-Adatum-Adel.pdf"}, {"synthetic", "alpine-1.pdf"}} {
		pdf, err := os.ReadFile(embeddedtest.Corpus(t, f[0], f[1]))
		require.NoError(t, err)
		found, err := embedded.Find(context.Background(), pdf, embedded.Limits{})
		require.NoError(t, err)
		require.Nil(t, found.Document)
		require.Empty(t, found.Attachments)
	}
}

// TestUnknownUnit: a newer Rec. 20/21 code outside the BMEcat 2005 list is
// written as the 2005 list's code for the same unit (XBX, box → BX), H87
// (piece) as C62; a code neither list knows is C62 with the original in a
// remark, as for text (the processor defers such a line before writing).
func TestUnknownUnit(t *testing.T) {
	_, src := orderX(t)
	xml := strings.Replace(string(src), `<ram:RequestedQuantity unitCode="C62">6</ram:RequestedQuantity>`, `<ram:RequestedQuantity unitCode="XBX">6</ram:RequestedQuantity>`, 1)
	xml = strings.Replace(xml, `<ram:RequestedQuantity unitCode="C62">10.00</ram:RequestedQuantity>`, `<ram:RequestedQuantity unitCode="H87">10.00</ram:RequestedQuantity>`, 1)
	require.NotEqual(t, string(src), xml)
	d, err := embedded.Recognise(context.Background(), "order-x.xml", []byte(xml))
	require.NoError(t, err)
	require.Equal(t, "XBX", d.Order.Items[0].Unit)
	out, err := opentrans.Marshal(d.Order, opentrans.WriteOptions{})
	require.NoError(t, err)
	opentranstest.Validate(t, out)
	item := x("ORDER", "ORDER_ITEM_LIST", "ORDER_ITEM")
	require.Equal(t, "BX", embeddedtest.XPath(t, out, item+"[1]"+x("ORDER_UNIT")))
	require.Equal(t, "C62", embeddedtest.XPath(t, out, item+"[2]"+x("ORDER_UNIT")))

	d.Order.Items[0].Unit = "Q9Z" // no unit of either list
	out, err = opentrans.Marshal(d.Order, opentrans.WriteOptions{})
	require.NoError(t, err)
	opentranstest.Validate(t, out)
	require.Equal(t, "C62", embeddedtest.XPath(t, out, item+"[1]"+x("ORDER_UNIT")))
	require.Contains(t, string(out), "Q9Z")
}

// TestFlateBombAttachment: an attachment that inflates to 64 MiB from
// about 64 KB is cut at the size cap (pdfdetach is killed once its output
// passes it) and reported; nothing else happens.
func TestFlateBombAttachment(t *testing.T) {
	pdf := embeddedtest.FlateBombPDF(64 << 20)
	require.Less(t, len(pdf), 256<<10)
	found, err := embedded.Find(context.Background(), pdf, embedded.Limits{})
	require.NoError(t, err)
	require.Nil(t, found.Document)
	require.Equal(t, []embedded.Note{{File: "bomb.xml", Result: "skipped: larger than 10485760 bytes"}}, found.Attachments)
}
