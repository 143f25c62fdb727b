// Package resultjson is the shape of the result JSON (results/…/<log_id>.json):
// the canonical order model with snake_case keys, dates as YYYY-MM-DD and
// decimals as strings, exactly as the template or reader produced them —
// the machine-readable twin of the openTRANS XML. Its field names are part
// of what clients and ops read, so they live here rather than as tags on the
// domain type; the processor writes it and `intakectl extract --generic`
// prints the same order.
package resultjson

import "github.com/docintake/docintake/pkg/order"

// File is one result JSON file.
type File struct {
	LogID     string `json:"log_id"`
	MessageID string `json:"message_id"`
	Template  string `json:"template"`
	// The template version of the attempt that produced this result
	// (audit: which version made this order); 0 and "" for the built-in
	// generic reader.
	TemplateVersion int    `json:"template_version"`
	TemplateSHA256  string `json:"template_sha256"`
	TemplateClient  string `json:"template_client,omitempty"`
	ResultMode      string `json:"result_mode,omitempty"`
	// Source is where the order was read: "text (pdftotext)", "text
	// (pdftotext) read by generic", "embedded Order-X COMFORT (order-x.xml)".
	Source string `json:"source,omitempty"`
	Order  Order  `json:"order"`
	// Flags are what the order's checks found (issue 28): a price outside
	// the client's price list, a delivery date before the order date or
	// already past. Absent when none; the order itself stays as printed.
	Flags []Flag `json:"flags,omitempty"`
}

// Flag is one finding about the order (pkg/orderflags.Flag).
type Flag struct {
	// Kind: price, price_no_entry, delivery_date_before_order,
	// delivery_date_past.
	Kind string `json:"kind"`
	// Line is the order line (1-based place in items), 0 for the header.
	Line     int    `json:"line"`
	Position string `json:"position,omitempty"`
	Article  string `json:"article,omitempty"`
	Expected string `json:"expected"`
	Printed  string `json:"printed"`
	Message  string `json:"message"`
}

// Order is the canonical order.
type Order struct {
	DocumentType string   `json:"document_type"`
	OrderID      string   `json:"order_id"`
	OrderDate    string   `json:"order_date,omitempty"`
	DeliveryDate string   `json:"delivery_date,omitempty"`
	Currency     string   `json:"currency,omitempty"`
	Language     string   `json:"language,omitempty"`
	BuyerOrderID string   `json:"buyer_order_id,omitempty"`
	Parties      []Party  `json:"parties"`
	Items        []Item   `json:"items"`
	Totals       Totals   `json:"totals"`
	PaymentTerms string   `json:"payment_terms,omitempty"`
	Remarks      []string `json:"remarks,omitempty"`
	NoItems      bool     `json:"no_items,omitempty"`
}

// Party is one party of the order.
type Party struct {
	Role    string  `json:"role"`
	ID      string  `json:"id,omitempty"`
	IDType  string  `json:"id_type,omitempty"`
	VATID   string  `json:"vat_id,omitempty"`
	Address Address `json:"address"`
	// OtherIDs are further ids of the party (GLN, legal registration) as
	// structured attachments carry them.
	OtherIDs []PartyID `json:"other_ids,omitempty"`
}

// PartyID is a further id of a party.
type PartyID struct {
	ID   string `json:"id"`
	Type string `json:"type,omitempty"`
}

// Address is a party's address.
type Address struct {
	Name         string   `json:"name,omitempty"`
	Name2        string   `json:"name2,omitempty"`
	Contact      string   `json:"contact,omitempty"`
	Street       string   `json:"street,omitempty"`
	Zip          string   `json:"zip,omitempty"`
	City         string   `json:"city,omitempty"`
	State        string   `json:"state,omitempty"`
	Country      string   `json:"country,omitempty"`
	CountryCoded string   `json:"country_coded,omitempty"`
	Phone        string   `json:"phone,omitempty"`
	Email        string   `json:"email,omitempty"`
	Lines        []string `json:"lines,omitempty"`
}

// Item is one order line.
type Item struct {
	Position           string   `json:"position,omitempty"`
	SupplierArticleID  string   `json:"supplier_article_id,omitempty"`
	BuyerArticleID     string   `json:"buyer_article_id,omitempty"`
	EAN                string   `json:"ean,omitempty"`
	Description        string   `json:"description,omitempty"`
	LongDescription    string   `json:"long_description,omitempty"`
	Quantity           string   `json:"quantity,omitempty"`
	Unit               string   `json:"unit,omitempty"`
	UnitPrice          string   `json:"unit_price,omitempty"`
	PriceBasisQuantity string   `json:"price_basis_quantity,omitempty"`
	LineAmount         string   `json:"line_amount,omitempty"`
	TaxRate            string   `json:"tax_rate,omitempty"`
	DeliveryDate       string   `json:"delivery_date,omitempty"`
	Remarks            []string `json:"remarks,omitempty"`
	// AsPrinted is the line in the buyer's unit as printed, when unit and
	// quantity above are the supplier's (issue 28: the unit table).
	AsPrinted *PrintedUnit `json:"as_printed,omitempty"`
}

// PrintedUnit is a line's quantity, unit and price as printed, and the
// factor and table that turned them into the line's (order.PrintedUnit).
type PrintedUnit struct {
	Quantity           string `json:"quantity,omitempty"`
	Unit               string `json:"unit"`
	UnitPrice          string `json:"unit_price,omitempty"`
	PriceBasisQuantity string `json:"price_basis_quantity,omitempty"`
	Factor             string `json:"factor"`
	Table              string `json:"table"`
}

// Totals are the order's summary amounts.
type Totals struct {
	NetAmount   string `json:"net_amount,omitempty"`
	TaxAmount   string `json:"tax_amount,omitempty"`
	GrossAmount string `json:"gross_amount,omitempty"`
}

// OrderOf renders o.
func OrderOf(o *order.Order) Order {
	oj := Order{DocumentType: string(o.Type), OrderID: o.ID, OrderDate: o.IssueDate.String(),
		DeliveryDate: o.DeliveryDate.String(), Currency: o.Currency, Language: o.Language, BuyerOrderID: o.BuyerOrderID,
		Parties: []Party{}, Items: []Item{}, PaymentTerms: o.PaymentTerms, Remarks: o.Remarks, NoItems: o.NoItems,
		Totals: Totals{o.Totals.NetAmount, o.Totals.TaxAmount, o.Totals.GrossAmount}}
	for _, p := range o.Parties {
		a := p.Address
		oj.Parties = append(oj.Parties, Party{Role: string(p.Role), ID: p.ID, IDType: p.IDType, VATID: p.VATID,
			Address: Address{a.Name, a.Name2, a.Contact, a.Street, a.Zip, a.City, a.State, a.Country, a.CountryCoded,
				a.Phone, a.Email, a.Lines}, OtherIDs: otherIDs(p.OtherIDs)})
	}
	for _, it := range o.Items {
		oj.Items = append(oj.Items, Item{it.Position, it.SupplierArticleID, it.BuyerArticleID, it.EAN, it.Description,
			it.LongDescription, it.Quantity, it.Unit, it.UnitPrice, it.PriceBasisQuantity, it.LineAmount, it.TaxRate,
			it.DeliveryDate.String(), it.Remarks, (*PrintedUnit)(it.AsPrinted)})
	}
	return oj
}

func otherIDs(ids []order.PartyID) []PartyID {
	var out []PartyID
	for _, id := range ids {
		out = append(out, PartyID{id.ID, id.Type})
	}
	return out
}
