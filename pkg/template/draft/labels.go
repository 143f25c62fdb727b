package draft

import "sort"

// kind is what a header field's value looks like.
type kind int

const (
	kindID kind = iota
	kindDate
	kindCurrency
	kindAmount
	kindText
	kindName
)

// fieldDef is a canonical header field and the labels buyers print before
// its value (English, German, French, Dutch; a few Spanish and Italian).
// Labels are compared case-insensitively at the start of a cell; amounts
// (totals) may sit anywhere in their line ("zzgl. 19 % MwSt.").
type fieldDef struct {
	Name   string
	Kind   kind
	Last   bool // the last occurrence wins (totals print at the end)
	Labels []string
}

var fieldDefs = []fieldDef{
	{Name: "order_id", Kind: kindID, Labels: []string{
		"Purchase Order Number", "Purchase Order ID", "Purchase Order", "Purchase Order No.", "Purchase Order No", "Purchase Order #", "Purchase Order Nr.",
		"PO Number", "PO No.", "PO No", "PO #", "PO#", "PO Nr", "PO-Nr", "P.O.#", "Order#", "PO Nr.", "P.O. Number", "P.O. No.", "P.O. #", "PO-Nr.",
		"Order Number", "Order No.", "Order No", "Order #", "Order Nr.", "Order ID", "Order Ref.",
		"Bestellnummer", "Bestell-Nr.", "Bestell-Nr", "Bestellnr.", "Bestellung Nr.", "Bestellung Nr", "Bestellung Nummer",
		"Auftragsnummer", "Auftrags-Nr.", "Auftragsnr.", "Bestellschein Nr.", "Belegnummer", "Beleg-Nr.", "Document No.", "Document Number",
		"N° de commande", "No de commande", "Nº de commande", "Numéro de commande", "Commande n°", "Commande N°",
		"Bon de commande n°", "Bon de commande N°", "Réf. commande", "N° commande",
		"Ordernummer", "Order nummer", "Inkoopordernummer", "Inkooporder nr.", "Bestelnummer", "Bestelnr.",
		"Número de pedido", "Nº de pedido", "N° pedido", "Pedido n°", "Numero ordine", "N. ordine",
	}},
	{Name: "delivery_date", Kind: kindDate, Labels: []string{
		"Delivery Date", "Requested Delivery Date", "Required Delivery Date", "Delivery by", "Deliver by",
		"Ship Date", "Required Date", "Requested Date", "Need by Date", "Need By",
		"Liefertermin", "Lieferdatum", "Wunschliefertermin", "Wunschtermin", "Anliefertermin", "Lieferung bis",
		"Date de livraison", "Livraison le", "Délai de livraison", "Date livraison",
		"Leverdatum", "Leveringsdatum", "Gewenste leverdatum", "Fecha de entrega", "Data consegna",
	}},
	{Name: "date", Kind: kindDate, Labels: []string{
		"Order Date", "PO Date", "Purchase Order Date", "Date of Order", "Issue Date", "Date of Issue", "Date Issued", "Date",
		"Bestelldatum", "Auftragsdatum", "Belegdatum", "Datum",
		"Date de commande", "Date commande", "Date du bon", "Le",
		"Orderdatum", "Besteldatum", "Fecha de pedido", "Fecha", "Data ordine", "Data",
	}},
	{Name: "currency", Kind: kindCurrency, Labels: []string{
		"Currency", "Currency Code", "Curr.", "Währung", "Devise", "Monnaie", "Valuta", "Munt", "Moneda", "Valuta ordine",
	}},
	{Name: "buyer_order_id", Kind: kindID, Labels: []string{
		"Your Reference", "Your Ref.", "Customer Reference", "Buyer Reference", "Ihr Zeichen", "Ihre Referenz",
		"Votre référence", "Votre réf.", "Uw referentie", "Uw ref.",
	}},
	{Name: "payment_terms", Kind: kindText, Labels: []string{
		"Payment Terms", "Terms of Payment", "Payment", "Terms",
		"Zahlungsbedingungen", "Zahlungsbedingung", "Zahlungsziel", "Zahlungskonditionen",
		"Conditions de paiement", "Conditions de règlement", "Modalités de paiement", "Règlement", "Paiement",
		"Betalingsvoorwaarden", "Betalingstermijn", "Betaling", "Condiciones de pago", "Condizioni di pagamento",
	}},
	{Name: "total_net", Kind: kindAmount, Last: true, Labels: []string{
		"Subtotal", "Sub-total", "Sub Total", "Net Total", "Total Net", "Total net", "Net Amount", "Total excl. VAT",
		"Total before tax", "Merchandise Total", "Goods Total",
		"Total netto", "Gesamtnettowert", "Nettowert gesamt", "Gesamt netto", "Nettobetrag", "Nettosumme", "Summe netto", "Netto", "Warenwert", "Zwischensumme", "Nettowert",
		"Total HT", "Montant HT", "Sous-total", "Sous total", "Total H.T.",
		"Subtotaal", "Totaal excl. BTW", "Netto bedrag", "Base imponible", "Imponibile",
	}},
	{Name: "total_tax", Kind: kindAmount, Last: true, Labels: []string{
		"Sales Tax", "VAT", "Tax", "Total Tax", "Tax Amount",
		"MwSt.", "MwSt", "MWST", "Mehrwertsteuer", "USt.", "USt", "Umsatzsteuer",
		"TVA", "Montant TVA", "Total TVA", "BTW", "IVA", "Impuesto",
	}},
	{Name: "total_gross", Kind: kindAmount, Last: true, Labels: []string{
		"Grand Total", "Total Amount", "Order Total", "Total Due", "Amount Due", "Total incl. VAT", "Total",
		"Gesamtbetrag", "Gesamtbruttowert", "Gesamtsumme", "Endbetrag", "Bruttobetrag", "Total brutto", "Summe brutto", "Gesamt", "Summe",
		"Total TTC", "Montant TTC", "Montant total", "Net à payer", "Total T.T.C.",
		"Totaal", "Totaalbedrag", "Totaal incl. BTW", "Te betalen", "Importe total", "Totale",
	}},
	{Name: "supplier_name", Kind: kindName, Labels: []string{
		"Vendor", "Supplier", "Seller", "Lieferant", "Auftragnehmer", "Fournisseur", "Leverancier", "Proveedor", "Fornitore",
	}},
	{Name: "delivery_name", Kind: kindName, Labels: []string{
		"Ship To", "Ship-To", "Deliver To", "Delivery Address", "Shipping Address", "Delivery to",
		"Lieferadresse", "Lieferanschrift", "Anlieferadresse", "Warenempfänger", "Lieferung an",
		"Adresse de livraison", "Livrer à", "Lieu de livraison", "Afleveradres", "Leveradres", "Afleveren op",
		"Dirección de entrega", "Indirizzo di consegna",
	}},
	{Name: "buyer_name", Kind: kindName, Labels: []string{
		"Buyer", "Purchaser", "Ordered by", "Besteller", "Auftraggeber", "Käufer", "Acheteur", "Donneur d'ordre",
		"Koper", "Besteld door", "Comprador",
	}},
}

// headings are printed texts that name or mark something and are never a
// value: the headings of party blocks the drafter has no field for, copy
// marks, and the titles of documents other than orders. A name or text
// value that is one of them is a label read as a value ("BILL TO" in the
// cell next to "VENDOR", "Invoice To" above the letterhead's name).
var headings = []string{
	"Bill To", "Bill-To", "Billed To", "Bill From", "Billed From", "Invoice To", "Invoice Address", "Billing Address",
	"Sold To", "Sold By", "Ship From", "Remit To", "Consignee", "Consignor", "Customer", "Client", "Recipient",
	"Sender", "From", "To", "Attention", "Attn", "Contact",
	"Rechnungsadresse", "Rechnungsanschrift", "Rechnungsempfänger", "Kunde", "Absender", "Empfänger",
	"Adresse de facturation", "Facturer à", "Expéditeur", "Destinataire", "Factuuradres", "Klant", "Afzender",
	"Original", "Duplicate", "Triplicate", "Copy", "Original for Recipient", "Duplicate for Transporter",
	"Triplicate for Supplier", "Customer Copy", "Kopie", "Duplikat", "Copie", "Duplicata",
	"Invoice", "Tax Invoice", "Proforma Invoice", "Credit Note", "Delivery Note", "Packing List",
	"Rechnung", "Gutschrift", "Lieferschein", "Facture", "Avoir", "Bon de livraison", "Factuur", "Creditnota", "Pakbon",
}

// labelRef is one label of one field, for longest-first matching.
type labelRef struct {
	Label string
	Def   *fieldDef
}

// allLabels lists every label, longest first, so "Order Date" wins over
// "Date" and "Total netto" over "Total".
var allLabels = func() []labelRef {
	var out []labelRef
	for i := range fieldDefs {
		for _, l := range fieldDefs[i].Labels {
			out = append(out, labelRef{l, &fieldDefs[i]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len([]rune(out[i].Label)) > len([]rune(out[j].Label)) })
	return out
}()

// column roles of an item table and the header words that name them.
type role string

const (
	rolePosition role = "position"
	roleArticle  role = "supplier_article_id"
	roleDesc     role = "description"
	roleQty      role = "quantity"
	roleUnit     role = "unit"
	rolePrice    role = "unit_price"
	roleBasis    role = "price_basis_quantity"
	roleAmount   role = "line_amount"
	roleDate     role = "line_delivery_date"
	roleTax      role = "tax_rate"
	roleEAN      role = "ean"
	roleOther    role = ""
)

var columnTerms = map[role][]string{
	rolePosition: {"Pos", "Pos.", "Position", "Line", "Ln", "Ln.", "Nr", "Nr.", "No", "No.", "N°", "Lfd. Nr.", "Ligne", "Regel"},
	roleArticle: {"Item", "Item #", "Mat.-Nr.", "Teilenummer", "Teile-Nr.", "Supplier Part", "Vendor Part", "Part No.", "Réf. fournisseur", "Item No", "Item No.", "Item Number", "Item Code", "Part", "Part #", "Part No", "Part No.", "Part Number",
		"Article", "Article No", "Article No.", "Art.-Nr.", "Art.Nr.", "Artikel", "Artikel-Nr.", "Artikelnr.", "Artikelnummer", "Artikelcode",
		"Material", "Materialnummer", "Material-Nr.", "SKU", "Product Code", "Product No", "Code", "Réf.", "Réf", "Référence", "Ref", "Ref.",
		"Code article", "Artikelnr", "Código", "Codice", "Your Item", "Ihre Art.-Nr.", "Sachnummer"},
	roleDesc: {"Description", "Item Description", "Article Description", "Product Description", "Kurztext", "Materialkurztext", "Benennung", "Artikelname", "Produkt", "Beschrijving", "Designation", "Bezeichnung", "Beschreibung", "Artikelbezeichnung", "Désignation", "Libellé", "Description",
		"Omschrijving", "Product", "Descripción", "Descrizione", "Text", "Leistung"},
	roleQty: {"Qty", "Qty.", "Quantity", "Qty Ordered", "Order Qty", "Ordered Qty", "Liefermenge", "Qte", "Quantité commandée", "Ordered", "Menge", "Anzahl", "Bestellmenge", "Qté", "Qté.", "Quantité", "Aantal",
		"Hoeveelheid", "Cantidad", "Quantità", "Qtà"},
	roleUnit: {"Unit", "UOM", "U/M", "UoM", "UM", "ME", "Einheit", "Mengeneinheit", "Unité", "Unite", "Eenh.", "Eenheid", "Unidad", "Unità"},
	rolePrice: {"Unit Price", "Price", "Net Price", "Unit Net Price", "Nettopreis", "Preis/Einheit", "Einzelpr.", "Price/Unit", "Unit Cost", "Rate", "Preis", "Einzelpreis", "Preis/PE", "Preis/ME", "Stückpreis", "E-Preis",
		"Prix", "Prix unit.", "Prix unit. HT", "Prix unitaire", "Prix unitaire HT", "P.U.", "PU HT", "Prijs", "Stukprijs", "Eenheidsprijs",
		"Precio", "Prezzo"},
	roleBasis: {"Per", "PE", "Preiseinheit", "Price Unit", "Basis", "Pro", "Par", "Charge base Qty", "Price Basis"},
	roleAmount: {"Amount", "Total", "Line Total", "Total Price", "Line Amount", "Ext. Amount", "Positionswert", "Nettowert", "Montant total", "Extended", "Ext. Price", "Extended Price", "Net Amount", "Value", "Betrag", "Gesamt",
		"Gesamtpreis", "Wert", "Summe", "Montant", "Montant HT", "Total HT", "Bedrag", "Totaal", "Importe", "Importo"},
	roleDate: {"Delivery Date", "Delivery", "Wunschtermin", "Requested Date", "Need By", "Req. Date", "Date", "Due Date", "Ship Date", "Liefertermin", "Lieferdatum", "Termin",
		"Livraison", "Date de livraison", "Date livr.", "Leverdatum", "Levering", "Entrega", "Consegna"},
	roleTax: {"VAT", "VAT %", "Tax", "Tax %", "MwSt", "MwSt.", "MwSt %", "USt", "USt.", "TVA", "TVA %", "BTW", "BTW %", "IVA"},
	roleEAN: {"EAN", "GTIN", "EAN/GTIN", "UPC"},
}

// termIndex maps a folded header term to its role; maxTermWords is the
// longest term in words.
var termIndex, maxTermWords = func() (map[string]role, int) {
	m := map[string]role{}
	n := 0
	for r, ts := range columnTerms {
		for _, t := range ts {
			m[fold(t)] = r
			if w := len(splitWords(t)); w > n {
				n = w
			}
		}
	}
	return m, n
}()

// titles are document titles: a keyword when printed.
var titles = []string{"Purchase Order", "Order", "Bestellung", "Auftrag", "Bestellschein", "Bon de commande", "Commande",
	"Inkooporder", "Bestelling", "Bestelbon", "Pedido", "Orden de compra", "Ordine"}
