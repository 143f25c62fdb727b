package pogen

// vocab is one language's label vocabulary. Every field lists variants; a
// document draws one of them, so readers meet the spread of wordings that real
// buyers print rather than one canonical label.
//
// Templates use placeholders: {id} order id, {p}/{n} page and page count,
// {r} a rate, {n} a schedule number, {date}, {qty}, {unit}, {domain}.
type vocab struct {
	lang string

	titles, orderNo, orderNoGlued, orderNoDate, orderDate, deliveryDate, currency []string
	vendor, shipTo, billTo, invoiceTo                                             []string
	payTerms, payValues, incoterms, incoValues, buyer                             []string
	vendorNo, customerNo, requisition, quoteRef, contract                         []string
	printDate, quoteDate, revision, copyMarks, pageFmt, contHeader                []string

	colPos, colArt, colDesc, colQty, colUnit, colPrice, colPer, colDisc, colAmount, colDate []string

	subtotal, netOnly, total, totalQty, freight, taxFmt []string
	schedule, materialRef, continued                    []string
	terms, termsTitle, signature, invoiceRefs           []string
	deliveryWords, units, attrs                         []string
	months, monthsAbbr                                  [12]string

	neg                                        map[string]negVocab
	dueDate, yourOrder, validUntil, customer   []string
	bank                                       []string
	amountWords                                []string // labels of the amount-in-words line (en only)
	productCol                                 int      // index into product.names
	signatureLines, computerGenerated, hsnCols []string
	forCompany                                 string // "For " before the signing company
}

// negVocab names one kind of non-order document: its titles, its own number
// labels and its date labels.
type negVocab struct{ titles, numLabels, dateLabels []string }

var en = &vocab{
	lang:         "en",
	titles:       []string{"PURCHASE ORDER", "Purchase Order", "PURCHASE ORDER", "Purchase Order", "ORDER", "Purchase Order - Store"},
	orderNo:      []string{"PO #", "PO#", "PO Number", "PO No.", "P.O. No.", "PO. NO -", "Purchase Order Number", "Purchase Order No.", "Order No:", "ORDER #", "P.O. Number", "Number", "Document No.", "Purchase Order #", "PO Number", "PO #"},
	orderNoGlued: []string{"PO#:", "PO#", "PO No.:", "Order#:", "P.O.#"},
	orderNoDate:  []string{"PO number/date", "PO No. & Date", "Order No./Date"},
	orderDate:    []string{"Date", "Dated", "PO Date", "P.O. Date", "PO-Date", "Order Date", "Purchase Order Date", "Issue Date", "Issued Date", "Creation Date", "Document Date", "Date of Order", "Date Placed", "Order Date", "PO Date"},
	deliveryDate: []string{"Delivery Date", "Deliver By", "Required Delivery Date", "Due Date", "Due on", "Promised Date", "Req. Date", "Required Date", "Shipment Date", "Delivery Required By", "Delivery Date"},
	currency:     []string{"Currency", "Curr", "Currency Code", "Currency"},
	vendor:       []string{"Vendor", "VENDOR", "Supplier", "SUPPLIER", "To", "M/s", "Seller", "Ordered from", "Purchased From", "Vendor Name & Address", "Supplier Details", "Vendor"},
	shipTo:       []string{"Ship To", "SHIP TO", "Shipped To", "Deliver To", "Delivery Address", "Shipping Address", "Send Goods to:", "Consignee (Ship to)"},
	billTo:       []string{"Bill To", "BILL TO", "Billing Address", "Buyer", "Bill-To Address"},
	invoiceTo:    []string{"Invoice To", "Invoice Address", "Send Invoice To", "Invoices to", "Buyer (Bill to)"},
	payTerms:     []string{"Payment Terms", "Terms", "Terms of Payment", "Pay Terms"},
	payValues:    []string{"Net 30", "Net 45 days", "2% 10, Net 30", "60 days from date of invoice", "Immediate", "100% advance", "30 days after receipt of goods", "Net 60"},
	incoterms:    []string{"Incoterms", "FOB", "Freight Terms", "Delivery Terms", "Ship Via"},
	incoValues:   []string{"FOB Destination", "EXW", "DAP Chicago", "FCA Shanghai", "CIF", "Prepaid & Add", "UPS Ground", "Best Way", "Door delivery"},
	buyer:        []string{"Buyer", "Contact", "Requested By", "Purchasing Agent", "Ordered By"},
	vendorNo:     []string{"Vendor No.", "Vendor #", "Vendor ID", "Your vendor number with us", "Supplier Code", "Supplier No.", "Vendor Code"},
	customerNo:   []string{"Customer No.", "Our Customer No.", "Account No."},
	requisition:  []string{"Requisition No.", "Req. No.", "PR No.", "Indent No."},
	quoteRef:     []string{"Quotation Ref.", "Quote No.", "Your Quotation", "Quote Reference", "Your Ref."},
	contract:     []string{"Contract No.", "Blanket PO", "Agreement No."},
	printDate:    []string{"Print Date", "Printed", "Date Printed", "E-mailed", "Run Date"},
	quoteDate:    []string{"Quote Date", "Quotation Date", "Requisition Date", "Revision Date", "Amended Date"},
	revision:     []string{"Revision", "Rev", "Version Number", "Change No."},
	copyMarks:    []string{"ORIGINAL", "ORIGINAL COPY", "Supplier Original", "Vendor Copy", "DUPLICATE", "Active", "NotConfirmed"},
	pageFmt:      []string{"Page {p} of {n}", "Page {p} OF {n}", "Page{p}/{n}", "Page {p} ({n})", "{p}", "PAGE {p} / {n}", "Page {p} of {n}"},
	contHeader:   []string{"{title} {id} (continued)", "PO {id}", "Purchase Order No. {id}", "{title}  No. {id}"},
	colPos:       []string{"Line", "Item", "Pos", "Sl No.", "Sr. No.", "#", "Ln", "S.No."},
	colArt:       []string{"Item #", "Part Number", "Material", "Item No.", "Product Code", "SKU", "Article", "Part No.", "Item Code", "Vendor Part #"},
	colDesc:      []string{"Description", "Item Description", "Description of Goods", "Material Description", "DESCRIPTION", "Particulars", "Product"},
	colQty:       []string{"Qty", "Order Qty", "Quantity", "Ordered", "QTY", "Qty Ordered", "Tgt Qty", "Quantity Ordered"},
	colUnit:      []string{"UOM", "Unit", "U/M", "UM", "Units"},
	colPrice:     []string{"Unit Price", "Price/Unit", "Price per unit", "Net price", "Unit Cost", "Cost", "Rate", "Basic Rate", "PRICE/EACH", "Net Unit Price", "Unit Price excl. Tax"},
	colPer:       []string{"Per", "per", "Price Unit", "Per Qty", "Charge base Qty"},
	colDisc:      []string{"Disc. %", "Discount %", "Disc %", "Disc.%"},
	colAmount:    []string{"Extended Price", "Ext Price", "Extended Cost", "Total", "Total Price", "Amount", "Net Value", "Net Amt", "Line Total", "Extended Net Amount"},
	colDate:      []string{"Delivery Date", "Req. Date", "Due Date", "Need By", "Promised Date", "Ship Date", "Requested Delivery Date"},
	subtotal:     []string{"Subtotal", "Sub Total", "Net Amount", "Total Net", "Net Order", "Total before tax", "Merchandise Total", "Taxable Value"},
	netOnly:      []string{"Total excl. tax", "Total (excl. VAT)", "Net Order Value", "Total Net Amount", "Order Total (excluding taxes)"},
	total:        []string{"Total", "Order Total", "PO Total", "Total Amount", "Grand Total", "TOTAL", "Total Order Value", "Amount Payable"},
	totalQty:     []string{"Total Qty", "Total Quantity", "Total Units"},
	freight:      []string{"Freight", "Shipping", "Shipping & Handling", "Freight Charges", "Delivery Charges"},
	taxFmt:       []string{"VAT {r}%", "VAT @ {r}%", "Tax {r}%"},
	schedule:     []string{"Schedule {n}: {qty} {unit} on {date}", "Delivery schedule: {date}  Qty {qty}", "Sched. Line {n}  {date}  {qty} {unit}", "F.Ent:{date}  {qty}"},
	materialRef:  []string{"Your material no.: ", "Vendor Material No: ", "Your material number ", "Mfr Part #: ", "Customer Part No.: "},
	continued:    []string{"Continued on next page", "Continued...", "*** Continued ***"},
	termsTitle:   []string{"Terms and Conditions", "TERMS & CONDITIONS", "General Terms of Purchase"},
	terms: []string{
		"Please quote our purchase order number on all invoices, delivery notes and correspondence.",
		"Payment will be made within the agreed terms from the date of receipt of a correct invoice.",
		"Goods must be delivered on or before the delivery date; late deliveries may be refused.",
		"Partial shipments are not accepted without prior written approval of the buyer.",
		"All goods are subject to inspection and approval at destination.",
		"Prices are firm and not subject to escalation for the duration of this order.",
		"The supplier shall acknowledge this order within three working days.",
		"Invoices without a valid PO reference will be returned unpaid.",
		"Our general terms and conditions of purchase apply; the supplier's terms are expressly excluded.",
		"Each package must carry a packing list showing PO number, line number and quantity.",
	},
	signature:         []string{"Authorised Signatory", "Authorized Signature", "Approved by", "For and on behalf of the buyer"},
	computerGenerated: []string{"This is a computer generated purchase order and does not require a signature.", "Computer generated document - no signature required."},
	invoiceRefs:       []string{"Please quote PO number {id} on all invoices, packing lists and correspondence.", "Send invoice to accounts.payable@{domain}", "Invoices must reference purchase order {id}.", "Mail invoices in duplicate to the invoice address."},
	deliveryWords:     []string{"IMMEDIATELY", "04 - 06 WEEKS", "ASAP", "2 WEEKS ARO"},
	units:             []string{"EA", "EACH", "PC", "PCS", "PCE", "UN", "NOS", "No.", "Unit", "BOX", "KG", "LB", "M", "SET", "PR", "RL", "pack"},
	attrs:             []string{"with certificate of conformity EN 10204 3.1", "packed in boxes of 100", "colour: black", "as per drawing no. DR-4711 rev. B", "RoHS compliant", "individually labelled with barcode", "supplied with test report"},
	months:            [12]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
	monthsAbbr:        [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"},
	neg: map[string]negVocab{
		"invoice":       {[]string{"INVOICE", "Invoice", "TAX INVOICE", "Vendor Bill"}, []string{"Invoice No.", "Invoice Number", "Invoice #", "Bill No."}, []string{"Invoice Date", "Date of Invoice", "Bill Date"}},
		"delivery_note": {[]string{"DELIVERY NOTE", "Packing Slip", "SHIPPING NOTE"}, []string{"Delivery Note No.", "Packing Slip #", "DN No."}, []string{"Dispatch Date", "Ship Date", "Date"}},
		"quotation":     {[]string{"QUOTATION", "Quote", "Sales Quotation"}, []string{"Quotation No.", "Quote #", "Quote Number"}, []string{"Quote Date", "Date"}},
		"credit_note":   {[]string{"CREDIT NOTE", "Credit Memo"}, []string{"Credit Note No.", "Credit Memo #"}, []string{"Credit Date", "Date"}},
		"proforma":      {[]string{"PROFORMA INVOICE", "Pro Forma Invoice"}, []string{"Proforma No.", "PI No."}, []string{"PI Date", "Date"}},
	},
	dueDate:        []string{"Due Date", "Payment Due", "Pay by"},
	yourOrder:      []string{"Your Order No.", "Customer PO", "Your Ref./Order No.", "Buyer's Order No.", "PO Reference"},
	validUntil:     []string{"Valid Until", "Quote valid until", "Validity"},
	customer:       []string{"Bill To", "Customer", "Sold To", "Invoice To"},
	bank:           []string{"Bank: {bank}  Account: {acct}  Routing: {routing}", "Remit to: {bank}, A/c {acct}", "IBAN: {iban}  BIC: {bic}"},
	amountWords:    []string{"Amount in words:", "Amount Chargeable (in words)", "Total (in words):", "Rupees in words:"},
	productCol:     0,
	signatureLines: []string{"______________________", "Signature: ____________", "(Authorised Signatory)"},
	hsnCols:        []string{"HSN/SAC", "HSN Code", "HSN"},
	forCompany:     "For ",
}
