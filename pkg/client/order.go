package client

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Order is the part of an openTRANS 2.1 ORDER document an ERP integration
// typically books: header, parties and items. Amounts and quantities stay
// decimal strings exactly as written (no float rounding); Raw on the
// Delivery keeps the whole document for anything not mapped here.
type Order struct {
	ID       string // ORDER_ID: the buyer's order number
	Date     string // ORDER_DATE (YYYY-MM-DD, possibly with a time)
	Currency string // bmecat:CURRENCY (ISO 4217)
	// DeliveryStart and DeliveryEnd are the requested delivery window.
	DeliveryStart, DeliveryEnd string
	Remarks                    []string
	Parties                    []Party
	// BuyerIDRef, SupplierIDRef, InvoiceRecipientIDRef and DeliveryIDRef
	// point at Parties by ID.
	BuyerIDRef, SupplierIDRef, InvoiceRecipientIDRef, DeliveryIDRef string
	Items                                                           []Item
	// TotalItemNum and TotalAmount come from ORDER_SUMMARY.
	TotalItemNum string
	TotalAmount  string
}

// Party is one PARTY of the order header.
type Party struct {
	ID      string // bmecat:PARTY_ID
	IDType  string // its type attribute (supplier_specific, buyer_specific, gln, …)
	Roles   []string
	Name    string
	Name2   string
	Contact string
	Email   string
	Street  string
	Zip     string
	City    string
	Country string // bmecat:COUNTRY_CODED, else bmecat:COUNTRY
	VATID   string
}

// Item is one ORDER_ITEM.
type Item struct {
	LineID           string
	SupplierPID      string // the supplier's article number
	BuyerPID         string // the buyer's article number
	InternationalPID string // GTIN/EAN when given
	Description      string // bmecat:DESCRIPTION_SHORT
	DescriptionLong  string
	Quantity         string
	Unit             string // bmecat:ORDER_UNIT (UN/ECE Rec 20 code, e.g. C62)
	UnitPrice        string // PRODUCT_PRICE_FIX/bmecat:PRICE_AMOUNT
	PriceQuantity    string // bmecat:PRICE_QUANTITY: the quantity UnitPrice is for
	LineAmount       string // PRICE_LINE_AMOUNT
	DeliveryStart    string
	DeliveryEnd      string
	Remarks          []string
}

// Party returns the first party with the given PARTY_ROLE (buyer,
// supplier, delivery, invoice_recipient, …), or nil.
func (o *Order) Party(role string) *Party {
	for i := range o.Parties {
		for _, r := range o.Parties[i].Roles {
			if r == role {
				return &o.Parties[i]
			}
		}
	}
	return nil
}

// ParseOrder reads an openTRANS 2.1 ORDER document. Element names are
// matched without their namespace prefix, so documents that bind the
// openTRANS and BMEcat namespaces to other prefixes read the same.
func ParseOrder(doc []byte) (*Order, error) {
	var x xmlOrder
	d := xml.NewDecoder(bytes.NewReader(doc))
	// Non-UTF-8 declarations: the service writes UTF-8; other encodings are
	// refused rather than misread.
	d.CharsetReader = func(cs string, _ io.Reader) (io.Reader, error) {
		return nil, fmt.Errorf("encoding %q is not supported (UTF-8 only)", cs)
	}
	if err := d.Decode(&x); err != nil {
		return nil, fmt.Errorf("parse openTRANS order: %w", err)
	}
	if x.XMLName.Local != "ORDER" {
		return nil, fmt.Errorf("parse openTRANS order: root element is %s, not ORDER", x.XMLName.Local)
	}
	info := x.Header.Info
	o := &Order{ID: tr(info.ID), Date: tr(info.Date), Currency: tr(info.Currency),
		DeliveryStart: tr(info.Delivery.Start), DeliveryEnd: tr(info.Delivery.End), Remarks: trAll(info.Remarks),
		BuyerIDRef: tr(info.Refs.Buyer), SupplierIDRef: tr(info.Refs.Supplier),
		InvoiceRecipientIDRef: tr(info.Refs.InvoiceRecipient), DeliveryIDRef: tr(info.Refs.Delivery),
		TotalItemNum: tr(x.Summary.TotalItemNum), TotalAmount: tr(x.Summary.TotalAmount)}
	for _, p := range info.Parties {
		a := p.Address
		country := tr(a.CountryCoded)
		if country == "" {
			country = tr(a.Country)
		}
		o.Parties = append(o.Parties, Party{ID: tr(p.ID.Value), IDType: p.ID.Type, Roles: trAll(p.Roles),
			Name: tr(a.Name), Name2: tr(a.Name2), Contact: tr(a.Contact.Name), Email: tr(a.Contact.Email),
			Street: tr(a.Street), Zip: tr(a.Zip), City: tr(a.City), Country: country, VATID: tr(a.VATID)})
	}
	for _, it := range x.Items {
		o.Items = append(o.Items, Item{LineID: tr(it.LineID), SupplierPID: tr(it.Product.SupplierPID),
			BuyerPID: tr(it.Product.BuyerPID), InternationalPID: tr(it.Product.InternationalPID),
			Description: tr(it.Product.Short), DescriptionLong: tr(it.Product.Long), Quantity: tr(it.Quantity),
			Unit: tr(it.Unit), UnitPrice: tr(it.Price.Amount), PriceQuantity: tr(it.Price.Quantity),
			LineAmount: tr(it.LineAmount), DeliveryStart: tr(it.Delivery.Start), DeliveryEnd: tr(it.Delivery.End),
			Remarks: trAll(it.Remarks)})
	}
	return o, nil
}

func tr(s string) string { return strings.TrimSpace(s) }

func trAll(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = tr(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// The xml… types mirror the ORDER schema by local element names.
type xmlOrder struct {
	XMLName xml.Name
	Header  struct {
		Info struct {
			ID       string      `xml:"ORDER_ID"`
			Date     string      `xml:"ORDER_DATE"`
			Delivery xmlDelivery `xml:"DELIVERY_DATE"`
			Parties  []xmlParty  `xml:"PARTIES>PARTY"`
			Refs     struct {
				Buyer            string `xml:"BUYER_IDREF"`
				Supplier         string `xml:"SUPPLIER_IDREF"`
				InvoiceRecipient string `xml:"INVOICE_RECIPIENT_IDREF"`
				Delivery         string `xml:"SHIPMENT_PARTIES_REFERENCE>DELIVERY_IDREF"`
			} `xml:"ORDER_PARTIES_REFERENCE"`
			Currency string   `xml:"CURRENCY"`
			Remarks  []string `xml:"REMARKS"`
		} `xml:"ORDER_INFO"`
	} `xml:"ORDER_HEADER"`
	Items   []xmlItem `xml:"ORDER_ITEM_LIST>ORDER_ITEM"`
	Summary struct {
		TotalItemNum string `xml:"TOTAL_ITEM_NUM"`
		TotalAmount  string `xml:"TOTAL_AMOUNT"`
	} `xml:"ORDER_SUMMARY"`
}

type xmlDelivery struct {
	Start string `xml:"DELIVERY_START_DATE"`
	End   string `xml:"DELIVERY_END_DATE"`
}

type xmlParty struct {
	ID struct {
		Value string `xml:",chardata"`
		Type  string `xml:"type,attr"`
	} `xml:"PARTY_ID"`
	Roles   []string `xml:"PARTY_ROLE"`
	Address struct {
		Name    string `xml:"NAME"`
		Name2   string `xml:"NAME2"`
		Contact struct {
			Name  string `xml:"CONTACT_NAME"`
			Email string `xml:"EMAILS>EMAIL"`
		} `xml:"CONTACT_DETAILS"`
		Street       string `xml:"STREET"`
		Zip          string `xml:"ZIP"`
		City         string `xml:"CITY"`
		Country      string `xml:"COUNTRY"`
		CountryCoded string `xml:"COUNTRY_CODED"`
		VATID        string `xml:"VAT_ID"`
	} `xml:"ADDRESS"`
}

type xmlItem struct {
	LineID  string `xml:"LINE_ITEM_ID"`
	Product struct {
		SupplierPID      string `xml:"SUPPLIER_PID"`
		InternationalPID string `xml:"INTERNATIONAL_PID"`
		BuyerPID         string `xml:"BUYER_PID"`
		Short            string `xml:"DESCRIPTION_SHORT"`
		Long             string `xml:"DESCRIPTION_LONG"`
	} `xml:"PRODUCT_ID"`
	Quantity string `xml:"QUANTITY"`
	Unit     string `xml:"ORDER_UNIT"`
	Price    struct {
		Amount   string `xml:"PRICE_AMOUNT"`
		Quantity string `xml:"PRICE_QUANTITY"`
	} `xml:"PRODUCT_PRICE_FIX"`
	LineAmount string      `xml:"PRICE_LINE_AMOUNT"`
	Delivery   xmlDelivery `xml:"DELIVERY_DATE"`
	Remarks    []string    `xml:"REMARKS"`
}
