package generic

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// fold lower-cases s and strips accents rune by rune, so that offsets in
// the folded text are offsets in the original (one rune for one rune).
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if f, ok := foldRunes[r]; ok {
			r = f
		}
		b.WriteRune(r)
	}
	return b.String()
}

var foldRunes = map[rune]rune{
	'ä': 'a', 'à': 'a', 'á': 'a', 'â': 'a', 'ã': 'a', 'å': 'a', 'ç': 'c', 'é': 'e', 'è': 'e', 'ê': 'e', 'ë': 'e',
	'í': 'i', 'ì': 'i', 'î': 'i', 'ï': 'i', 'ñ': 'n', 'ó': 'o', 'ò': 'o', 'ô': 'o', 'ö': 'o', 'õ': 'o', 'ú': 'u',
	'ù': 'u', 'û': 'u', 'ü': 'u', 'ß': 's', 'º': '°', '’': '\'', '‘': '\'', '\u00a0': ' ',
}

// labelEnd ends a label: punctuation, spaces or the end of the cell, but not
// a letter or digit (so "po" does not match "pos").
const labelEnd = `(?:\s*[:#.\-–]+\s*|\s+|$|\b)`

// labelRE compiles alternatives into one label pattern anchored at the
// start of a (folded) cell.
func labelRE(alts ...string) *regexp.Regexp {
	return regexp.MustCompile(`^(?:` + strings.Join(alts, "|") + `)` + labelEnd)
}

// no is the "number" word of a label in the six languages.
const no = `(?:number|num|nbr|no|nr|n\.?°|#|nummer|numero|nro|id|n)\.?`

// Header label vocabularies: tier 1 names the field exactly; tier 2 is a
// bare word ("Date") used only when no tier-1 label is on the page.
var (
	// orderIDDateLabels name the number and the date in one label ("PO
	// No. & Date:", "Bestell-Nr./Datum", "N° / Date commande"); the value
	// is "4500012345 / 14.03.2024".
	orderIDDateLabels = regexp.MustCompile(`^(?:(?:p\s*\.?\s*o\s*\.?|purchase\s+order|order|bestell(?:ung)?|best\.?|commande|pedido|ordine|bestel|inkooporder)?\s*` +
		`(?:-?\s*` + no + `)?\s*(?:/|&|and)\s*(?:date|dated|datum|vom|du|fecha(?:\s+(?:del?\s+)?pedido)?|date\s+(?:de\s+)?(?:la\s+)?commande|data(?:\s+ordine)?|dt\.?))` + labelEnd)
	orderIDLabels = labelRE(
		`purchase\s*order\s*`+no, `p\s*\.?\s*o\s*\.?\s*`+no, `p\s*\.?\s*o\s*\.?\s*(?:number|no)\.?\s*/\s*date`,
		`(?:customer\s+)?order\s*`+no, `purchase\s+order\s*:`,
		`bestell(?:ung)?s?\s*-?\s*(?:nummer|nr|no)\.?`, `bestellnummer`, `best\.?\s*-?\s*nr\.?`, `bestelbon\s*`+no, `ref\.?\s*(?:de\s+)?(?:la\s+)?commande`,
		`(?:n°|no|nr|num(?:ero)?)\.?\s*(?:de\s+)?(?:la\s+)?commande`, `(?:bon\s+de\s+)?commande\s*`+no,
		`inkoop\s*order\s*(?:nummer|nr|no)\.?`, `inkoopordernummer`, `(?:bestel|order)\s*nummer`,
		`(?:numero|no|n°)\.?\s*(?:de\s+)?(?:pedido|orden(?:\s+de\s+compra)?)`, `(?:pedido|orden\s+de\s+compra)\s*`+no,
		`(?:numero|n\.?°|no|nr|n)\.?\s*(?:dell?'?\s*)?ordine`, `ordine\s*`+no, `ord\.?\s*`+no,
		`document\s*`+no, `reference\s+no\.?\s*&\s*date\.?`, `(?:order|bestel)\s*nummer\s*/\s*datum`, `commande\s*n\.?°\s*/\s*du`,
		`(?:numero|no|n\.?°)\.?\s*(?:de\s+)?(?:la\s+)?commande`, `(?:n\.?°|no|numero)\.?\s*(?:de\s+)?pedido`,
	)
	// orderIDLabels2 are bare "Number" labels, used only under an order
	// title when no label names the order number.
	orderIDLabels2  = labelRE(`number`, `nummer`, `numero`, `no\.`, `nr\.`, `n\.?°`, `n\.`, `belegnummer`, `beleg-?nr\.?`)
	orderDateLabels = labelRE(
		`(?:purchase\s*)?order\s*date`, `p\s*\.?\s*o\s*\.?\s*-?\s*(?:issue\s+)?date`, `p\s*\.?\s*o\s*\.?\s*(?:number|no)\.?\s*/\s*date`,
		`date\s+of\s+(?:order|issue|purchase\s+order|po)`, `date\s+placed`, `issued?\s+(?:date|on)`, `date\s+issued`,
		`creat(?:ion|ed|e)\s+date`, `document\s+date`, `bestelldatum`, `auftragsdatum`, `belegdatum`, `dokumentdatum`, `bestellung\s+vom`, `datum\s+der\s+bestellung`, `date\s+(?:de\s+)?(?:la\s+)?commande`,
		`orderdatum`, `besteldatum`, `datum\s+(?:van\s+)?(?:de\s+)?bestelling`, `fecha\s+(?:del?\s+)?(?:pedido|orden|emision|documento)`, `data\s+(?:dell?'?\s*)?(?:ordine|documento)`,
		`bestellt\s+am`, `bestellung\s+vom`, `emise?\s+le`, `date\s+d'?emission`, `date\s+du\s+document`, `documentdatum`, `ausgestellt\s+am`,
	)
	orderDateLabels2 = labelRE(`date`, `dated`, `datum`, `fecha`, `data`, `del`, `dt\.?`)
	deliveryLabels   = labelRE(
		`deliver(?:y|ed)?(?:\s+(?:date|by|on|required))?`, `due\s+(?:date|on)`, `(?:required|req\.?|need)(?:\s+(?:by|date|delivery\s+date|on))?`,
		`promised\s+date`, `ship(?:ment|ping)?\s+date`, `liefer(?:datum|termin|tag)`, `wunschtermin`,
		`date\s+de\s+livraison`, `livraison`, `lever(?:ings)?datum`, `fecha\s+de\s+entrega`, `entrega`,
		`data\s+(?:di\s+)?consegna`, `consegna`,
	)
	currencyLabels = labelRE(`currency`, `curr`, `wahrung`, `devise`, `monnaie`, `valuta`, `munt`, `moneda`, `divisa`)
)

// Totals vocabularies, matched at the start of a cell; the amount is the
// last number on the label's line.
var (
	qtyTotalLabels = labelRE(`total\s+(?:qty|quantity|quantities|units|pcs|pieces)`, `gesamtmenge`, `quantite\s+totale`,
		`totaal\s+aantal`, `cantidad\s+total`, `quantita\s+totale`)
	netLabels = labelRE(`sub\s*-?\s*total`, `net\s*(?:total|amount|value|order(?:\s+value)?)?`,
		`(?:order\s+|po\s+|grand\s+)?total\s*\(?(?:net|before\s+tax|excl[a-z.]*|excluding|w/o|without)[^0-9]*`, `taxable\s+(?:amount|value)`, `merchandise\s+total`, `goods\s+(?:total|value)`, `goederenwaarde`, `warenwert`, `orderwaarde\s+excl[a-z.]*[^0-9]*`, `bestellwert\s+netto`, `valeur\s+(?:des\s+)?marchandises`,
		`nettobetrag`, `gesamt\s*netto\s*wert`, `subtotale`, `netto(?:summe|betrag|wert|bedrag)?`, `summe\s+netto`, `zwischensumme`, `warenwert`, `gesamt\s*netto`,
		`total\s+h\.?\s*t\.?`, `total\s+hors\s+tax(?:es|e)?`, `montant\s+h\.?\s*t\.?`, `sous[\s-]total`, `subtotaal`, `totaal\s+excl[a-z.]*[^0-9]*`,
		`base\s+imponible`, `imponibile`, `totale\s+(?:imponibile|netto)`)
	taxLabels    = labelRE(`(?:(?:zzgl|plus|incl|inkl|add|\+)[.:]?\s*)?(?:\d+(?:[.,]\d+)?\s*%\s*)?(?:(?:sales\s+)?tax(?:es)?(?:\s+amount)?|total\s+tax|vat|mwst|mehrwertsteuer|umsatzsteuer|u\.?\s*st|t\.?\s*v\.?\s*a\.?|tva|btw|iva|i\.v\.a\.|[csiu]?gst|utgst|impuesto|imposta)[^0-9]*`)
	chargeLabels = labelRE(`shipping(?:\s+(?:and|&)\s+handling)?`, `freight`, `ship\s*/\s*ins\.?`, `handling`,
		`delivery\s+charges?`, `packing(?:\s+(?:and|&)\s+forwarding)?`, `fracht(?:kosten)?`, `versand(?:kosten)?`,
		`porto`, `verpackung`, `frais\s+de\s+(?:port|livraison|transport|expedition)`, `transport(?:kosten|e|o)?`, `spese\s+di\s+(?:trasporto|spedizione)`, `gastos\s+de\s+(?:envio|transporte)`, `verzendkosten`, `vracht(?:kosten)?`, `envio`, `portes`,
		`spedizione`, `trasporto`, `round(?:ing)?\s*-?\s*off`, `rounding`)
	// payLabels are the amount to pay, whatever word they start with
	// ("Net à payer" is the gross).
	payLabels   = labelRE(`net\s+a\s+payer`, `net\s+payable`, `(?:total\s+)?a\s+pagar`, `zu\s+zahlen`, `te\s+betalen`, `da\s+pagare`, `amount\s+(?:payable|due)`)
	grossLabels = labelRE(`(?:grand|order|po|p\.o\.|invoice)?\s*total(?:\s+(?:amount|value|order|due|payable|incl[a-z.]*|including)[^0-9]*)?`,
		`total\s+amount`, `amount\s+payable`, `gesamt(?:betrag|summe)?`, `endbetrag`, `summe`, `brutto(?:betrag)?`,
		`total\s+t\.?\s*t\.?\s*c\.?`, `montant\s+t\.?\s*t\.?\s*c\.?`, `totaal\s*bedrag`, `totaal(?:\s+incl[a-z.]*)?`, `order\s*totaal`, `orderwaarde`, `bestellwert`, `valore\s+(?:dell'?\s*)?ordine`, `valeur\s+(?:de\s+la\s+)?commande`, `total\s+a\s+pagar`,
		`importe\s+total`, `totale(?:\s+(?:ordine|documento|generale))?`, `net\s+payable`)
)

// Document titles: an order, or a document that is not one.
var (
	orderTitle = regexp.MustCompile(`^(?:purchase\s+order|purchasing\s+order|order|p\s*\.?\s*o\s*\.?|bestellung|einkaufsbestellung|` +
		`bon\s+de\s+commande|commande(?:\s+(?:fournisseur|d'?achat))?|bestelling|bestelorder|inkooporder|bestelbon|orden\s+de\s+compra|pedido(?:\s+de\s+compra)?|` +
		`ordine(?:\s+(?:d'?acquisto|fornitore|di\s+acquisto))?)(?:\s*[-–:]\s*[a-z ]+)?$`)
	otherTitleCore = `(?:(?:(?:tax|proforma|pro\s*-?\s*forma|commercial|sales)\s+)?invoice|vendor\s+bill|(?:proforma\s*-?\s*)?rechnung|` +
		`(?:handels)?rechnung|facture|factuur|factura|fattura|credit\s*note|gutschrift|avoir|creditnota|nota\s+de\s+credito|nota\s+di\s+credito|` +
		`delivery\s+note|lieferschein|bon\s+de\s+livraison|bon\s+d'?expedition|pakbon|albaran|bolla\s+di\s+consegna|` +
		`documento\s+di\s+trasporto|packing\s+(?:slip|list)|shipping\s+note|quotation|quote|angebot|devis|offerte|` +
		`presupuesto|cotizacion|offerta|preventivo|order\s+confirmation|auftragsbestatigung|confirmation\s+de\s+commande|` +
		`orderbevestiging|confirmacion\s+de\s+pedido|conferma\s+d'?ordine|sales\s+order|order\s+acknowledge?ment)`
	otherTitleWhole = regexp.MustCompile(`^` + otherTitleCore + `(?:\s*\(\d+\))?(?:\s*[-–:]?\s*(?:copy|original|duplicate|no\.?|nr\.?|n°|#|number|nummer|numero)?)?\s*[:.#]?$`)
	// invoiceLabels are labels only a non-order prints (an invoice's own
	// number or date), for documents without a title.
	invoiceLabels = labelRE(`invoice\s*`+no, `invoice\s+date`, `rechnungs\s*-?\s*(?:nummer|nr|datum)\.?`,
		`(?:n°|no|numero)\.?\s*(?:de\s+)?facture`, `date\s+de\s+facture`, `factuur\s*(?:nummer|datum|nr)\.?`,
		`(?:numero|n°|no)\.?\s*(?:de\s+)?factura`, `fecha\s+de\s+factura`)
)

// spacedLetters collapses letter-spaced titles ("P U R C H A S E  O R D E R").
var spacedLetters = regexp.MustCompile(`^(?:\pL ){3,}\pL$`)

// unspace removes the spaces of a letter-spaced phrase; other text is
// returned as it is.
func unspace(s string) string {
	if spacedLetters.MatchString(s) {
		return strings.ReplaceAll(s, " ", "")
	}
	return s
}

// matchLabel matches re at the start of the folded cell text and returns
// the label as printed and the rest of the cell (its own value, if any).
func matchLabel(re *regexp.Regexp, c cell) (label, rest string, ok bool) {
	f := c.folded
	if f == "" {
		f = fold(c.text)
	}
	m := re.FindStringIndex(f)
	if m == nil {
		return "", "", false
	}
	n := utf8.RuneCountInString(f[:m[1]])
	runes := []rune(c.text)
	return strings.TrimSpace(string(runes[:n])), strings.TrimSpace(string(runes[n:])), true
}
