// Package opentrans writes the canonical order model (package order) as
// openTRANS 2.1 ORDER, ORDERRESPONSE and INVOICE documents and reads such
// documents back into the model, with encoding/xml only.
//
// Every document Write produces is valid against opentrans_2_1.xsd (checked
// in the tests with xmllint through package opentranstest), with one
// documented exception: for result_mode no_items (Order.NoItems) the item
// list is written empty and TOTAL_ITEM_NUM is 0, although the schema wants at
// least one item.
//
//	doc, err := opentrans.Marshal(o, opentrans.WriteOptions{GenerationTime: time.Now()})
//	...
//	back, err := opentrans.Read(bytes.NewReader(doc)) // back equals o
//
// # Mapping
//
// Header (X is ORDER, ORDERRESPONSE or INVOICE; X_INFO the info element):
//
//	Type                  root element; ORDER gets type="standard"
//	ID                    ORDER: ORDER_ID. ORDERRESPONSE: SUPPLIER_ORDER_ID when BuyerOrderID is set
//	                      (the response's own number), else ORDER_ID. INVOICE: INVOICE_ID
//	BuyerOrderID          ORDERRESPONSE: ORDER_ID (the buyer's order answered).
//	                      INVOICE: INVOICE_HEADER/ORDER_HISTORY/ORDER_ID. ORDER: note
//	IssueDate             ORDER_DATE / ORDERRESPONSE_DATE / INVOICE_DATE as YYYY-MM-DD (dtDATETIME allows
//	                      a date alone). Mandatory: when zero, the processing date and a note
//	DeliveryDate          X_INFO/DELIVERY_DATE with DELIVERY_START_DATE = DELIVERY_END_DATE; Read takes the end
//	Language              bmecat:LANGUAGE default="true" (ISO 639-1 or -2 codes accepted); other values: note
//	Currency              bmecat:CURRENCY when in the schema's 2005 list ("€" and lower case accepted);
//	                      otherwise a note, and for INVOICE (where CURRENCY is mandatory) the default
//	                      WriteOptions.DefaultCurrency (EUR), with a note when nothing was printed
//	PaymentTerms          note "Payment terms: …" (PAYMENT needs a payment means we do not know)
//	Remarks               X_INFO/REMARKS type="order"|"orderresponse"|"invoice", after the notes
//	Totals.GrossAmount    X_SUMMARY/TOTAL_AMOUNT (the spec defines it as the total including all taxes)
//	Totals.NetAmount      ORDER, ORDERRESPONSE: note. INVOICE: NET_VALUE_GOODS (the sum of the line
//	                      amounts when not set)
//	Totals.TaxAmount      ORDER, ORDERRESPONSE: note. INVOICE: TOTAL_TAX/TAX_DETAILS_FIX/TAX_AMOUNT;
//	                      INVOICE TOTAL_AMOUNT is net + tax when GrossAmount is not set
//	Totals.LinesAmount,   notes (every document type): the printed total of the line amounts, the
//	  Charges, Allowances, document charges and allowances inside the net total, the charges added
//	  ExtraCharges        after tax
//	Totals.Quantity       note "Total quantity: …" (the printed total of the item quantities)
//	NoItems               empty X_ITEM_LIST, TOTAL_ITEM_NUM 0; Read sets it for an empty list
//	(items)               X_SUMMARY/TOTAL_ITEM_NUM = number of items written
//	WriteOptions          CONTROL_INFO/GENERATOR_INFO ("docintake") and GENERATION_DATE
//
// Parties, each a PARTIES/PARTY in model order:
//
//	ID, IDType            bmecat:PARTY_ID type=IDType (ASCII letters and digits kept unless one of the
//	                      schema's values such as supplier_specific). No ID: generated from the role
//	                      ("buyer", "supplier", "delivery", "invoice_recipient", made unique with -2, …)
//	Role                  PARTY_ROLE (a role outside the schema's list: "other")
//	Address.Name, Name2   ADDRESS/bmecat:NAME, bmecat:NAME2
//	Address.Contact       ADDRESS/CONTACT_DETAILS/bmecat:CONTACT_NAME (Read: FIRST_NAME + CONTACT_NAME)
//	Address.Street, Zip, City, State, Country
//	                      bmecat:STREET, ZIP, CITY, STATE, COUNTRY
//	Address.CountryCoded  bmecat:COUNTRY_CODED when in the schema's list (upper-cased); otherwise a note
//	VATID                 ADDRESS/bmecat:VAT_ID
//	Address.Phone, Email  ADDRESS/bmecat:PHONE, bmecat:EMAIL (Read falls back to CONTACT_DETAILS)
//	Address.Lines         ADDRESS/bmecat:ADDRESS_REMARKS, one per line
//
// References: the first buyer and supplier party are BUYER_IDREF and
// SUPPLIER_IDREF, the first invoice recipient INVOICE_RECIPIENT_IDREF, the
// first delivery party DELIVERY_IDREF (ORDER_PARTIES_REFERENCE /
// SHIPMENT_PARTIES_REFERENCE; INVOICE_INFO for invoices, where the supplier
// is INVOICE_ISSUER_IDREF and the invoice recipient, or else the buyer,
// INVOICE_RECIPIENT_IDREF). Each IDREF carries its party's id type. A party
// the document type requires but the model lacks (buyer and supplier; for
// invoices issuer and recipient) is written with a generated id and its role
// only, so every IDREF names a PARTY of the document. Parties may share an
// id (partners often use the customer number for buyer and delivery
// address); Read tells them apart by PARTY_ROLE.
//
// Items, each an ORDER_ITEM / ORDERRESPONSE_ITEM / INVOICE_ITEM:
//
//	Position              LINE_ITEM_ID (the 1-based line number when empty)
//	SupplierArticleID     PRODUCT_ID/bmecat:SUPPLIER_PID type="supplier_specific"
//	EAN                   PRODUCT_ID/bmecat:INTERNATIONAL_PID type="gtin"
//	BuyerArticleID        PRODUCT_ID/bmecat:BUYER_PID type="buyer_specific"
//	Description           PRODUCT_ID/bmecat:DESCRIPTION_SHORT
//	LongDescription       PRODUCT_ID/bmecat:DESCRIPTION_LONG
//	Quantity              QUANTITY (mandatory)
//	Unit                  bmecat:ORDER_UNIT, mapped by UnitCode; unknown units: C62 and a note
//	UnitPrice             PRODUCT_PRICE_FIX/bmecat:PRICE_AMOUNT
//	TaxRate               PRODUCT_PRICE_FIX/TAX_DETAILS_FIX/bmecat:TAX as a factor (19 → 0.19), TAX_TYPE vat
//	PriceBasisQuantity    PRODUCT_PRICE_FIX/bmecat:PRICE_QUANTITY ("" = 1, not written)
//	LineAmount            PRICE_LINE_AMOUNT (the printed line amount, after any discount)
//	DiscountPercent       PRODUCT_PRICE_FIX/ALLOW_OR_CHARGES_FIX/ALLOW_OR_CHARGE type="allowance"
//	                      (ALLOW_OR_CHARGE_TYPE rebate, SEQUENCE 1) with AOC_PERCENTAGE_FACTOR as a
//	                      factor (75 → 0.75); negative: type="surcharge"; 0: not written
//	DiscountAmount        note "Discount amount of the line: …", and an ALLOW_OR_CHARGE after the
//	                      percentage with AOC_MONETARY_AMOUNT per price unit (amount × PRICE_QUANTITY
//	                      ÷ QUANTITY, as openTRANS applies allowances to the price) when exact;
//	                      0: not written. See allowance.go
//	DeliveryDate          DELIVERY_DATE (start = end); INVOICE_ITEM has none: note
//	Remarks               REMARKS, after the item's notes
//
// Without a unit price there is no PRODUCT_PRICE_FIX, so tax rate, price
// basis and discount percentage go to notes. INVOICE_ITEM requires price and line amount: Write
// refuses an invoice item without them.
//
// # Notes
//
// What openTRANS has no valid place for is kept in REMARKS "<label>: <value>"
// before the document's own remarks, so a person reading the document in the
// ERP sees it, and Read puts it back into the model: values outside the code
// lists (unit, currency, country code, language), payment terms, order
// totals other than the gross total, and values longer than the schema
// allows. Such a value is cut to the limit in its element (NAME 50
// characters, SUPPLIER_PID 32, DESCRIPTION_SHORT 150, …) and kept whole in a
// note "Full value of <element>[ of PARTY n]: …". Read accepts a leading
// remark as a note only when it is consistent with the document (the label
// known, in the writer's order, the value one the writer would have written
// for what the elements hold); otherwise it stays a remark.
//
// # Text
//
// Characters XML 1.0 forbids (control characters other than tab, CR and LF,
// U+FFFE, U+FFFF) are removed and invalid UTF-8 bytes become U+FFFD; values
// are trimmed. '<', '&' and "]]>" are escaped by encoding/xml. Decimals
// must be in the model's canonical form (digits, optional '-' and '.'), at
// most 24 significant digits (xmllint's limit); Write refuses others.
package opentrans
