package generic

import (
	"regexp"
	"sort"
	"strings"
)

// colKind is what a column of the item table holds.
type colKind int

const (
	colOther colKind = iota
	colPos
	colArticle
	colDesc
	colQty
	colUnit
	colPrice
	colPer
	colAmount
	colDisc
	colDate
	colTax // tax rate or amount, HSN code: read past, never an item value
)

var colNames = [...]string{"other", "position", "article", "description", "quantity", "unit", "unit price", "price basis", "amount", "discount", "date", "tax"}

func (k colKind) String() string { return colNames[k] }

// Column vocabulary, tried in this order on a header cell's folded text
// (so "Unit Price" is a price and "Total Qty" a quantity).
var colVocab = []struct {
	kind colKind
	re   *regexp.Regexp
}{
	{colTax, regexp.MustCompile(`^(?:(?:[csiu]?gst|vat|tax|mwst|ust|tva|btw|iva|igst|cgst|sgst)(?:\s*(?:%|rate|amt|amount|code))?|hsn(?:\s*/\s*sac)?(?:\s+code)?|sac|tax\s+code)(?:$|[^\pL\pN])`)},
	{colDisc, regexp.MustCompile(`^(?:disc(?:ount)?|rabatt|remise|korting|descuento|dto|sconto)(?:$|[^\pL\pN])`)},
	{colQty, regexp.MustCompile(`^(?:(?:order(?:ed)?|tgt|total|req\.?|po)\s+)?(?:qty|qnty|quantity|quantities|menge|bestellmenge|anzahl|quantite|qte|aantal|hoeveelheid|cantidad|cant|quantita|q\.?ta|ordered|besteld(?:\s+aantal)?|stk)(?:$|[^\pL\pN])`)},
	{colPer, regexp.MustCompile(`^(?:per|pe|pro|par|por|price\s+unit|charge\s+base\s+qty|basis|pr\.?\s*unit|prijseenheid|preiseinheit|unite\s+de\s+prix|base\s+prix|unidad\s+(?:de\s+)?precio|unita\s+(?:di\s+)?prezzo|per\s+qty)$`)},
	{colPrice, regexp.MustCompile(`^(?:(?:net\s+|gross\s+)?unit\s*(?:net\s+)?(?:price|cost|rate)|(?:net|gross|list|basic|base|sales)?\s*(?:price|rate|cost)(?:\s*(?:/|per)\s*(?:unit|each|ea|pc))?|price\s*each|mrp|u/p|einzelpreis|e-?preis|netto\s*preis|nettopreis|preis|stuckpreis|prix(?:\s+unit(?:aire)?)?|p\.?\s*u\.?|(?:netto\s*)?prijs|stukprijs|eenheidsprijs|precio(?:\s+unit(?:ario)?)?|prezzo(?:\s+unit(?:ario)?)?)(?:$|[^\pL\pN])`)},
	{colAmount, regexp.MustCompile(`^(?:ext(?:ended|\.)?\s*(?:price|cost|amount|amt|value)?|total(?:\s+(?:price|amount|value|cost))?|t\.?\s*value|amount|amt|net\s+(?:value|amt|amount)|line\s+(?:total|amount|value)|value|gesamt(?:preis|betrag|wert|nettowert)?|netto\s*(?:wert|betrag)|nettowert|positionswert|betrag|wert|montant(?:\s+(?:net|h\.?t\.?))?|(?:netto\s*|regel)?bedrag|totaal|importe|importo|totale|summe|valore|valeur|total\s+ligne|total\s+linea)(?:$|[^\pL\pN])`)},
	{colUnit, regexp.MustCompile(`^(?:unit|units|uom|u/m|u\.m\.|um|unit\s+of\s+measure|(?:mengen)?einheit|me|unite|eenh(?:eid)?|een|unidad|uds?|unita|pack|pkg)\.?$`)},
	{colDate, regexp.MustCompile(`(?:deliv(?:ery)?\.?\s*date|due\s*date|^date|liefer(?:datum|termin)|req(?:uired)?\.?\s*date|ship\s*date|promised|need\s+by|delivery|livraison|entrega|consegna|cons\.|levering)`)},
	{colArticle, regexp.MustCompile(`^(?:item\s*(?:#|no\.?|nr\.?|number|code|id)|part\s*(?:#|no\.?|number)?|article|art\.?\s*-?\s*(?:nr|no)\.?|artikel(?:nummer|nr\.?)?|articolo|articulo|material(?:\s*(?:no\.?|number|#|code))?|materialnummer|sachnummer|teilenummer|sku|product\s*(?:code|no\.?|id|#)|code|codice|codigo|cod\.?|ref(?:erence|erenz|erencia)?\.?|catalog(?:ue)?\s*(?:no\.?|#)|model|vendor\s+(?:part|item)|your\s+(?:part|item)|buyer\s+(?:part|item)|(?:votre|vs\.?|vostro|su|uw|ihre?)\s+(?:ref|art|cod|codice|codigo|referencia|artikel)[a-z.\-]*)(?:$|[^\pL\pN])`)},
	{colPos, regexp.MustCompile(`^(?:pos(?:ition|izione|icion)?\.?|item|line|ln|l/n|sl\.?\s*no\.?|s\.?\s*no\.?|sr\.?\s*no\.?|#|no\.?|nr\.?|n\.?|lfd\.?\s*nr\.?|n°|posten|line\s*#|item\s*#?\s*line|riga|rg\.?|regel|linea|lin\.?|ligne|lig\.?|zeile)$`)},
	{colDesc, regexp.MustCompile(`(?:desc(?:ription)?|artikelomschrijving|bezeichnung|beschreibung|beschrijving|designation|denominazione|denominacion|concepto|libelle|omschrijving|descripcion|descrizione|particulars|product|goods|material|text|name|artikelbezeichnung|leistung)`)},
}

func classify(text string) colKind {
	k, _ := classifyMatch(text)
	return k
}

// classifyMatch classifies a header cell and says whether the vocabulary
// word covers all of it ("Qty" of "Qty Unit Price/Unit" does not).
func classifyMatch(text string) (colKind, bool) {
	t := strings.TrimSpace(strings.Trim(fold(text), ":"))
	t = stripCurrency(t)
	for _, v := range colVocab {
		if m := v.re.FindStringIndex(t); m != nil {
			return v.kind, m[1] >= len(strings.TrimRight(t, " .:/"))
		}
	}
	return colOther, false
}

// splitCell splits a header cell that names two columns with single
// spaces between them ("Qty Unit Price/Unit") at the word where the
// first column's name ends and the second's begins.
func splitCell(c cell) []cell {
	kind, whole := classifyMatch(c.text)
	if kind == colOther || whole || len(c.words) < 2 {
		return []cell{c}
	}
	for k := 1; k < len(c.words); k++ {
		head, tail := joinWords(c.words[:k]), joinWords(c.words[k:])
		// A trailing word that qualifies the first is not a column of its
		// own: "Price per", "Total ligne", "Quantity Ordered", "Date de
		// livraison".
		if tk := classify(tail); tk == kind || tk == colPer || tk == colPos || tk == colDesc || kind == colDate {
			return []cell{c}
		}
		if hk, hw := classifyMatch(head); hk == kind && hw && classify(tail) != colOther {
			return append([]cell{cellOf(c.words[:k])}, splitCell(cellOf(c.words[k:]))...)
		}
	}
	return []cell{c}
}

func cellOf(ws []word) cell {
	c := cell{text: joinWords(ws), col: ws[0].col, end: ws[len(ws)-1].end, words: ws}
	c.folded = fold(c.text)
	return c
}

// stripCurrency drops a currency named after a header label ("Price
// (USD)", "Amount in EUR", "Total €").
func stripCurrency(t string) string {
	f := strings.Fields(t)
	if len(f) < 2 {
		return t
	}
	last := strings.Trim(f[len(f)-1], "()[]")
	if !isoCodes[strings.ToUpper(last)] && !strings.ContainsAny(last, "$€£₹") && last != "rs." && last != "rs" {
		return t
	}
	f = f[:len(f)-1]
	if n := len(f); n > 1 && f[n-1] == "in" {
		f = f[:n-1]
	}
	return strings.Join(f, " ")
}

// column is one column of the item table, from its (possibly stacked)
// header cells.
type column struct {
	kind     colKind
	text     string
	col, end int
}

// header is the item table's header: its lines and columns.
type header struct {
	first, last int // line indexes
	cols        []column
}

// kinds returns the set of column kinds.
func (h *header) has(k colKind) bool {
	for _, c := range h.cols {
		if c.kind == k {
			return true
		}
	}
	return false
}

// index is the first column of kind k, or -1.
func (h *header) index(k colKind) int {
	for i, c := range h.cols {
		if c.kind == k {
			return i
		}
	}
	return -1
}

// score rates a header: a quantity column and as many other kinds of
// columns as possible; 0 when it cannot be an item table header.
func (h *header) score() int {
	if !h.has(colQty) {
		return 0
	}
	seen := map[colKind]bool{}
	for _, c := range h.cols {
		if c.kind != colOther {
			seen[c.kind] = true
		}
	}
	if len(seen) < 3 {
		return 0
	}
	return len(seen)
}

// headerAt builds a header from lines i..j (inclusive), merging cells that
// sit over each other (a stacked header: "Unit" over "Price").
func (r *reader) headerAt(i, j int) *header {
	var cols []column
	for k := i; k <= j; k++ {
		var cells []cell
		for _, c := range r.d.lines[k].cells {
			cells = append(cells, splitCell(c)...)
		}
		for _, c := range cells {
			merged := false
			for n := range cols {
				if overlaps(cols[n].col, cols[n].end, c.col, c.end, 0) {
					cols[n].text += " " + c.text
					cols[n].col, cols[n].end = min(cols[n].col, c.col), max(cols[n].end, c.end)
					merged = true
					break
				}
			}
			if !merged {
				cols = append(cols, column{text: c.text, col: c.col, end: c.end})
			}
		}
	}
	sort.Slice(cols, func(a, b int) bool { return cols[a].col < cols[b].col })
	defer perWithoutPrice(cols)
	for n := range cols {
		cols[n].kind = classify(cols[n].text)
		if cols[n].kind == colOther {
			cols[n].kind = classifyParts(r, i, j, cols[n])
		}
	}
	return &header{first: i, last: j, cols: cols}
}

// perWithoutPrice makes the first price-basis column of a header without
// a price column the price ("Price unit" over a price, as some print it).
func perWithoutPrice(cols []column) {
	for _, c := range cols {
		if c.kind == colPrice {
			return
		}
	}
	for i := range cols {
		if cols[i].kind == colPer {
			cols[i].kind = colPrice
			return
		}
	}
}

// classifyParts classifies a merged column by its cells one at a time,
// for a stacked header whose lines read as separate labels.
func classifyParts(r *reader, i, j int, col column) colKind {
	for k := i; k <= j; k++ {
		for _, c := range r.d.lines[k].cells {
			if overlaps(c.col, c.end, col.col, col.end, 0) {
				if kind := classify(c.text); kind != colOther {
					return kind
				}
			}
		}
	}
	return colOther
}

// headerLike reports whether a line can be part of a table header: text
// with few digits.
func headerLike(l *line) bool {
	if l.empty() {
		return false
	}
	d, n := 0, 0
	for _, c := range l.cells {
		for _, w := range c.words {
			n++
			if digits(w.text) > 0 && !strings.ContainsAny(w.text, "%()") {
				d++
			}
		}
	}
	return d*3 <= n && d <= 1
}

// findHeader returns the best item table header starting at or after
// line from on the same page run, or nil.
func (r *reader) findHeader(from int, page int) *header {
	for i := from; i < len(r.d.lines); i++ {
		l := r.d.lines[i]
		if page > 0 && l.page != page {
			return nil
		}
		if !headerLike(l) || !namesColumn(l) {
			continue
		}
		var best *header
		for j := i; j < len(r.d.lines) && j <= i+3; j++ {
			if !headerLike(r.d.lines[j]) || r.d.lines[j].page != l.page {
				break
			}
			h := r.headerAt(i, j)
			switch {
			case h.score() == 0:
			case best == nil || h.score() > best.score():
				best = h
			case h.score() == best.score() && stacksOn(best, r.d.lines[j]):
				best = h // a further header line under the columns ("Price (INR)")
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// stacksOn reports whether every cell of l sits under a column of h.
func stacksOn(h *header, l *line) bool {
	for _, c := range l.cells {
		under := false
		for _, col := range h.cols {
			under = under || overlaps(c.col, c.end, col.col, col.end, 0)
		}
		if !under {
			return false
		}
	}
	return true
}

// namesColumn reports whether a line has a cell of the column vocabulary:
// a table header starts there, not at a note above it.
func namesColumn(l *line) bool {
	for _, c := range l.cells {
		for _, p := range splitCell(c) {
			if classify(p.text) != colOther {
				return true
			}
		}
	}
	return false
}

// sameHeader reports whether b repeats the columns of a (a table going on
// on the next page): the same kinds of columns, give or take one that the
// page's spacing merged into its neighbour ("Qty UOM").
func sameHeader(a, b *header) bool {
	common := 0
	for k := colPos; k <= colDate; k++ {
		if a.has(k) && b.has(k) {
			common++
		}
	}
	return b.has(colQty) && common >= min(a.score(), b.score())-1
}
