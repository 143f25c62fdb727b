// Package order is the canonical business document that templates produce and
// the openTRANS writers consume: an order (or order response, or invoice) with
// its parties, items and totals. It is independent of any PDF layout and of
// openTRANS; both sides meet here.
//
// Amounts and quantities are decimal strings in canonical form ("-"? digits
// ("." digits)?, no thousands separators, "." as decimal point) so that no
// value passes through a float between the PDF and the XML.
package order

import "time"

// DocumentType is what kind of business document a template expects.
type DocumentType string

// Document types a template may declare (docintake.document_type).
const (
	TypeOrder         DocumentType = "order"
	TypeOrderResponse DocumentType = "order_response"
	TypeInvoice       DocumentType = "invoice"
	// TypeOrderChange is a change to an order already sent (Order-X 230,
	// openTRANS ORDERCHANGE); ID is the changed order's id.
	TypeOrderChange DocumentType = "order_change"
)

// Date is a calendar date without time of day or zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// IsZero reports whether d is unset.
func (d Date) IsZero() bool { return d.Year == 0 && d.Month == 0 && d.Day == 0 }

// String renders d as YYYY-MM-DD ("" when zero).
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// DateOf returns the date part of t.
func DateOf(t time.Time) Date { return Date{t.Year(), t.Month(), t.Day()} }

// Role is the part a party plays in the document.
type Role string

// Party roles, as openTRANS names them.
const (
	RoleBuyer    Role = "buyer"
	RoleSupplier Role = "supplier"
	RoleDelivery Role = "delivery"
	RoleInvoice  Role = "invoice_recipient"
)

// Address is a postal address as printed; every field optional.
type Address struct {
	Name         string // company or person name (first line)
	Name2        string // department, c/o, second name line
	Contact      string // contact person
	Street       string // street and number
	Zip          string // postal code
	City         string
	State        string // state or region
	Country      string // country name as printed
	CountryCoded string // ISO 3166-1 alpha-2 when known
	Phone        string
	Email        string
	Lines        []string // the address as printed, line by line, when not split
}

// Party is one participant: its ids, address and VAT id.
type Party struct {
	Role    Role
	ID      string // party id as printed or mapped (e.g. buyer's customer number, GLN)
	IDType  string // "buyer_specific", "supplier_specific", "gln", "duns", … ("" = unspecified)
	VATID   string
	Address Address
	// OtherIDs are further identifiers of the same party (a GLN beside the
	// buyer's number for it, a legal registration), as structured
	// documents carry them; written as further PARTY_IDs.
	OtherIDs []PartyID
}

// PartyID is one identifier of a party with its type ("gln", "duns",
// "party_specific", …; as Party.IDType).
type PartyID struct {
	ID, Type string
}

// Item is one order line.
type Item struct {
	Position           string // line item id as printed ("10", "1", "A-1")
	SupplierArticleID  string // supplier's article number (SUPPLIER_PID)
	BuyerArticleID     string // buyer's article number (BUYER_PID)
	EAN                string // GTIN/EAN
	Description        string // short description
	LongDescription    string
	Quantity           string // decimal
	Unit               string // unit as printed; after pkg/units a code of the BMEcat 2005 list
	UnitPrice          string // decimal, price per PriceBasisQuantity units
	PriceBasisQuantity string // decimal; "" means 1
	LineAmount         string // decimal
	TaxRate            string // decimal percentage, "" if unknown
	DeliveryDate       Date
	Remarks            []string
	// DiscountPercent and DiscountAmount are the line's discount as
	// printed: a percentage off the price ("75.00" for 75 %), then an
	// amount off the line (decimal, positive for a discount), so that
	// LineAmount = Quantity × UnitPrice ÷ PriceBasisQuantity ×
	// (1 − DiscountPercent/100) − DiscountAmount. "" when not printed.
	// UnitPrice stays the printed (list) price.
	DiscountPercent string
	DiscountAmount  string
	// AsPrinted is the line in the buyer's unit as printed, kept when the
	// unit was normalised to a code or converted by the client's unit
	// table (pkg/units); nil when the line was written as printed. Omitted
	// from JSON when nil, so that the duplicate check's canonical form of
	// a line without one stays as it was.
	AsPrinted *PrintedUnit `json:",omitempty"`
}

// PrintedUnit is an item's quantity, unit and price as printed, before
// they were expressed in the supplier's unit.
type PrintedUnit struct {
	Quantity           string
	Unit               string
	UnitPrice          string
	PriceBasisQuantity string
	// Factor is how many supplier units one printed unit is ("12" for a
	// case of 12; "1" when only the spelling became a code).
	Factor string
	// Table is what decided: "client" (the client's unit table) or
	// "builtin" (the built-in spellings).
	Table string
}

// Totals are the document's summary amounts (decimals; "" when not printed).
type Totals struct {
	NetAmount   string // sum of line amounts / total without tax
	TaxAmount   string
	GrossAmount string // total including tax
	// LinesAmount is a printed total of the line amounts, when the document
	// prints one apart from the net total.
	LinesAmount string
	// Charges and Allowances are document-level charges and allowances
	// (discounts) included in the net total: net = lines + charges −
	// allowances.
	Charges    string
	Allowances string
	// ExtraCharges are charges added after tax (shipping or handling
	// printed below the tax): gross = net + tax + extra charges.
	ExtraCharges string
	// Quantity is a printed total of the item quantities (decimal), which
	// the sum of the items' quantities must equal.
	Quantity string
}

// Order is the canonical document.
type Order struct {
	Type         DocumentType
	ID           string // order number (ORDER_ID)
	IssueDate    Date   // order date
	DeliveryDate Date   // requested delivery date (header level)
	Currency     string // ISO 4217 as printed or derived ("EUR")
	Language     string // ISO 639-2 ("deu", "eng"), "" if unknown
	BuyerOrderID string // for order responses/invoices: the buyer's order id referenced
	Parties      []Party
	Items        []Item
	Totals       Totals
	PaymentTerms string
	Remarks      []string
	// NoItems is set for result_mode no_items: items are neither parsed nor
	// required and the ORDER_ITEM_LIST is written empty.
	NoItems bool
}

// Party returns the first party with role r and whether there is one.
func (o *Order) Party(r Role) (Party, bool) {
	for _, p := range o.Parties {
		if p.Role == r {
			return p, true
		}
	}
	return Party{}, false
}
