package embedded_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
)

// peppolOrder is a Peppol BIS Ordering 3 order in the shape of the
// specification's examples; the expectations below are read off it by hand.
const peppolOrder = `<?xml version="1.0" encoding="UTF-8"?>
<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:fdc:peppol.eu:poacc:trns:order:3</cbc:CustomizationID>
  <cbc:ProfileID>urn:fdc:peppol.eu:poacc:bis:ordering:3</cbc:ProfileID>
  <cbc:ID>PO-4711</cbc:ID>
  <cbc:IssueDate>2024-05-02</cbc:IssueDate>
  <cbc:OrderTypeCode>220</cbc:OrderTypeCode>
  <cbc:Note>Deliver to gate 3</cbc:Note>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cbc:CustomerReference>ABC-99</cbc:CustomerReference>
  <cac:BuyerCustomerParty><cac:Party>
    <cbc:EndpointID schemeID="0088">7300010000001</cbc:EndpointID>
    <cac:PartyIdentification><cbc:ID schemeID="0088">7300010000001</cbc:ID></cac:PartyIdentification>
    <cac:PartyName><cbc:Name>Buyer AB</cbc:Name></cac:PartyName>
    <cac:PostalAddress><cbc:StreetName>Main street 1</cbc:StreetName><cbc:CityName>Stockholm</cbc:CityName>
      <cbc:PostalZone>11122</cbc:PostalZone><cac:Country><cbc:IdentificationCode>SE</cbc:IdentificationCode></cac:Country></cac:PostalAddress>
    <cac:PartyTaxScheme><cbc:CompanyID>SE556677889901</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
    <cac:Contact><cbc:Name>Anna Buyer</cbc:Name><cbc:Telephone>+46 8 123</cbc:Telephone><cbc:ElectronicMail>anna@buyer.se</cbc:ElectronicMail></cac:Contact>
  </cac:Party></cac:BuyerCustomerParty>
  <cac:SellerSupplierParty><cac:Party>
    <cbc:EndpointID schemeID="0088">7300010000002</cbc:EndpointID>
    <cac:PartyName><cbc:Name>Seller GmbH</cbc:Name></cac:PartyName>
  </cac:Party></cac:SellerSupplierParty>
  <cac:Delivery>
    <cac:DeliveryLocation><cac:Address><cbc:StreetName>Dock 7</cbc:StreetName><cbc:CityName>Malmo</cbc:CityName>
      <cbc:PostalZone>21120</cbc:PostalZone><cac:Country><cbc:IdentificationCode>SE</cbc:IdentificationCode></cac:Country></cac:Address></cac:DeliveryLocation>
    <cac:RequestedDeliveryPeriod><cbc:StartDate>2024-05-20</cbc:StartDate><cbc:EndDate>2024-05-24</cbc:EndDate></cac:RequestedDeliveryPeriod>
    <cac:DeliveryParty><cac:PartyName><cbc:Name>Warehouse Malmo</cbc:Name></cac:PartyName></cac:DeliveryParty>
  </cac:Delivery>
  <cac:PaymentTerms><cbc:Note>30 days net</cbc:Note></cac:PaymentTerms>
  <cac:TaxTotal><cbc:TaxAmount currencyID="EUR">25.00</cbc:TaxAmount></cac:TaxTotal>
  <cac:AnticipatedMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="EUR">100.00</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="EUR">100.00</cbc:TaxExclusiveAmount>
    <cbc:PayableAmount currencyID="EUR">125.00</cbc:PayableAmount>
  </cac:AnticipatedMonetaryTotal>
  <cac:OrderLine><cbc:Note>fragile</cbc:Note><cac:LineItem>
    <cbc:ID>1</cbc:ID>
    <cbc:Quantity unitCode="BX">4</cbc:Quantity>
    <cbc:LineExtensionAmount currencyID="EUR">100.00</cbc:LineExtensionAmount>
    <cac:Delivery><cac:RequestedDeliveryPeriod><cbc:StartDate>2024-05-21</cbc:StartDate></cac:RequestedDeliveryPeriod></cac:Delivery>
    <cac:Price><cbc:PriceAmount currencyID="EUR">250.00</cbc:PriceAmount><cbc:BaseQuantity unitCode="BX">10</cbc:BaseQuantity></cac:Price>
    <cac:Item>
      <cbc:Description>Screws, stainless, 100 per box</cbc:Description>
      <cbc:Name>Screw M4</cbc:Name>
      <cac:BuyersItemIdentification><cbc:ID>B-77</cbc:ID></cac:BuyersItemIdentification>
      <cac:SellersItemIdentification><cbc:ID>S-1001</cbc:ID></cac:SellersItemIdentification>
      <cac:StandardItemIdentification><cbc:ID schemeID="0160">4012345678901</cbc:ID></cac:StandardItemIdentification>
      <cac:ClassifiedTaxCategory><cbc:ID>S</cbc:ID><cbc:Percent>25</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:ClassifiedTaxCategory>
    </cac:Item>
  </cac:LineItem></cac:OrderLine>
</Order>`

func TestUBLOrder(t *testing.T) {
	d, err := embedded.Recognise(context.Background(), "order.xml", []byte(peppolOrder))
	require.NoError(t, err)
	require.Equal(t, "embedded UBL Peppol BIS Ordering 3 (order.xml)", d.Source())
	o := d.Order
	require.Equal(t, order.TypeOrder, o.Type)
	require.Equal(t, "PO-4711", o.ID)
	require.Equal(t, order.Date{Year: 2024, Month: 5, Day: 2}, o.IssueDate)
	require.Equal(t, order.Date{Year: 2024, Month: 5, Day: 20}, o.DeliveryDate)
	require.Equal(t, "EUR", o.Currency)
	require.Equal(t, "30 days net", o.PaymentTerms)
	require.Equal(t, []string{"Deliver to gate 3", "Buyer reference: ABC-99"}, o.Remarks)
	buyer, _ := o.Party(order.RoleBuyer)
	require.Equal(t, order.Party{Role: order.RoleBuyer, ID: "7300010000001", IDType: "gln", VATID: "SE556677889901",
		Address: order.Address{Name: "Buyer AB", Contact: "Anna Buyer", Street: "Main street 1", Zip: "11122", City: "Stockholm",
			CountryCoded: "SE", Phone: "+46 8 123", Email: "anna@buyer.se"}}, buyer)
	seller, _ := o.Party(order.RoleSupplier)
	require.Equal(t, "7300010000002", seller.ID)
	require.Equal(t, "Seller GmbH", seller.Address.Name)
	ship, _ := o.Party(order.RoleDelivery)
	require.Equal(t, order.Address{Name: "Warehouse Malmo", Street: "Dock 7", Zip: "21120", City: "Malmo", CountryCoded: "SE"}, ship.Address)
	require.Equal(t, order.Totals{NetAmount: "100.00", TaxAmount: "25.00", GrossAmount: "125.00", LinesAmount: "100.00"}, o.Totals)
	require.Equal(t, []order.Item{{Position: "1", SupplierArticleID: "S-1001", BuyerArticleID: "B-77", EAN: "4012345678901",
		Description: "Screw M4", LongDescription: "Screws, stainless, 100 per box", Quantity: "4", Unit: "BX",
		UnitPrice: "250.00", PriceBasisQuantity: "10", LineAmount: "100.00", TaxRate: "25",
		DeliveryDate: order.Date{Year: 2024, Month: 5, Day: 21}, Remarks: []string{"fragile"}}}, o.Items)
	out, err := opentrans.Marshal(o, opentrans.WriteOptions{})
	require.NoError(t, err)
	opentranstest.Validate(t, out)
}

// TestInvoiceRecognition: UBL invoices and credit notes, XRechnung and
// Factur-X guidelines are recognised from the root and the guideline.
func TestInvoiceRecognition(t *testing.T) {
	for _, tc := range []struct {
		xml, standard, profile string
		kind                   embedded.Kind
	}{
		{`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0</cbc:CustomizationID><cbc:ID>R1</cbc:ID></Invoice>`,
			embedded.StandardUBL, "XRechnung", embedded.KindInvoice},
		{`<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:ID>C1</cbc:ID></CreditNote>`,
			embedded.StandardUBL, "", embedded.KindCreditNote},
		{`<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"><rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_2.3</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext><rsm:ExchangedDocument><ram:ID>X1</ram:ID><ram:TypeCode>380</ram:TypeCode></rsm:ExchangedDocument></rsm:CrossIndustryInvoice>`,
			embedded.StandardXRechnung, "2.3", embedded.KindInvoice},
		{`<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"><rsm:ExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:factur-x.eu:1p0:basicwl</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext><rsm:ExchangedDocument><ram:ID>F1</ram:ID><ram:TypeCode>381</ram:TypeCode></rsm:ExchangedDocument></rsm:CrossIndustryInvoice>`,
			embedded.StandardFacturX, "BASICWL", embedded.KindCreditNote},
	} {
		d, err := embedded.Recognise(context.Background(), "a.xml", []byte(tc.xml))
		require.NoError(t, err)
		require.NotNil(t, d)
		require.Equal(t, tc.standard, d.Standard)
		require.Equal(t, tc.profile, d.Profile)
		require.Equal(t, tc.kind, d.Kind)
		require.Nil(t, d.Order)
	}
	// A root of another vocabulary, or the right name in the wrong
	// namespace, is not a business document.
	for _, other := range []string{`<Order xmlns="urn:example:orders"><ID>1</ID></Order>`, `<html><body/></html>`, `%PDF-1.7`} {
		d, err := embedded.Recognise(context.Background(), "x", []byte(other))
		require.NoError(t, err)
		require.Nil(t, d)
	}
}
