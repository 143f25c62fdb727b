package generic

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

var (
	numericDate = regexp.MustCompile(`(?:^|[^\d])(\d{1,4})([./-])(\d{1,2})([./-])(\d{2,4})(?:$|[^\d])`)
	// textualDate finds dates with a month name: "12-Mar-2024",
	// "12 March 2024", "5. Mai 2024", "March 12, 2024", "Mar 12 2024".
	textualDate = regexp.MustCompile(`(?i)\b\d{1,2}(?:st|nd|rd|th|er)?\.?[\s/-]*\pL{3,10}\.?[\s/,-]*\d{2,4}\b|\b\pL{3,10}\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b`)
)

// dateOrder is how a document writes numeric dates.
type dateOrder int

const (
	orderUnknown dateOrder = iota
	orderDMY
	orderMDY
)

// numDate is a numeric date as printed: its fields and separator.
type numDate struct {
	a, b, y int
	sep     string
	ymd     bool
}

func parseNumDate(m []string) (numDate, bool) {
	if m[2] != m[4] {
		return numDate{}, false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[3])
	y, _ := strconv.Atoi(m[5])
	if len(m[1]) == 4 { // 2024-03-14
		if len(m[5]) > 2 {
			return numDate{}, false
		}
		return numDate{a: y, b: b, y: a, sep: m[2], ymd: true}, true
	}
	if len(m[1]) == 3 || len(m[5]) == 3 {
		return numDate{}, false
	}
	if len(m[5]) == 2 {
		y += 2000
	}
	return numDate{a: a, b: b, y: y, sep: m[2]}, true
}

// date turns a numeric date into a calendar date in the given order.
func (n numDate) date(o dateOrder) (order.Date, bool) {
	day, month := n.a, n.b
	if n.ymd {
		day, month = n.a, n.b // a holds the day for ISO dates (see parseNumDate)
	} else if o == orderMDY {
		day, month = n.b, n.a
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || n.y < 1990 || n.y > 2099 {
		return order.Date{}, false
	}
	t := time.Date(n.y, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	if t.Day() != day {
		return order.Date{}, false
	}
	return order.DateOf(t), true
}

// ambiguous reports whether the date reads differently in the two orders.
func (n numDate) ambiguous() bool { return !n.ymd && n.a <= 12 && n.b <= 12 && n.a != n.b }

// detectDateOrder looks at every numeric date of the document: a first
// field over 12 proves day-month, a second over 12 month-day, and a dotted
// date is day first everywhere. Evidence both ways (a document that mixes
// orders) is unknown. Without evidence, slashed dates of a document in US
// dollars with a US address are read month first (the corpus notes count
// 40 of 86 real POs writing month first, most of them North American,
// against 19 day first, most of them Indian); anything else
// (no currency, dashed dates, and day-first countries, whose documents
// mix in month-first dates often enough) stays unknown, and an ambiguous
// date is then a rejection — except in a document written in a continental
// European language (German, French, Dutch, Spanish, Italian), where the
// day comes first.
func detectDateOrder(d *doc, currency string, usAddr bool, lang string) (dateOrder, string) {
	dmy, mdy, dotted, dashed := 0, 0, 0, 0
	for _, l := range d.lines {
		for _, m := range numericDate.FindAllStringSubmatch(l.raw, -1) {
			n, ok := parseNumDate(m)
			if !ok || n.ymd {
				continue
			}
			switch {
			case n.a > 12 && n.b <= 12:
				dmy++
			case n.b > 12 && n.a <= 12:
				mdy++
			}
			switch n.sep {
			case ".":
				dotted++
			case "-":
				dashed++
			}
		}
	}
	switch {
	case dmy > 0 && mdy > 0:
		return orderUnknown, "the document writes dates both day-first and month-first"
	case dmy > 0:
		return orderDMY, "a date with a day over 12 in the first field"
	case mdy > 0:
		return orderMDY, "a date with a day over 12 in the second field"
	case dotted > 0:
		return orderDMY, "dotted dates are day-first"
	case dashed > 0:
		return orderUnknown, "dashed dates (06-07-2019) are written both ways and no date proves which"
	case currency == "USD" && usAddr:
		return orderMDY, "no date proves the order; a US dollar document with a US address writes month first"
	case lang != "":
		return orderDMY, "no date proves the order; a document in " + lang + " writes the day first"
	}
	return orderUnknown, "no date proves whether day or month comes first"
}

// findDate returns the first date in s: numeric in the document's order
// (an ambiguous one only when the order is known), or with a month name.
// ok is false when s holds no date; ambiguous is set when s holds a
// numeric date the document's order cannot settle.
func findDate(s string, o dateOrder) (d order.Date, ok, ambiguous bool) {
	if m := numericDate.FindStringSubmatch(s); m != nil {
		if n, valid := parseNumDate(m); valid {
			if n.ambiguous() && o == orderUnknown {
				return order.Date{}, false, true
			}
			oo := o
			if oo == orderUnknown {
				oo = orderDMY // not ambiguous: either order reads the same or only one is valid
				if n.b > 12 {
					oo = orderMDY
				}
			}
			d, ok = n.date(oo)
			return d, ok, false
		}
	}
	if m := textualDate.FindString(s); m != "" {
		if d, err := template.ParseDate(m, nil, nil); err == nil && d.Year >= 1990 && d.Year <= 2099 {
			return d, true, false
		}
	}
	return order.Date{}, false, false
}

func monthOf(m int) time.Month { return time.Month(m) }

// startsWithDate reports whether text begins with a date (after a colon
// or a dash), not a date further on under another label.
func startsWithDate(text string) bool {
	t := strings.TrimLeft(text, " :-–.")
	for _, re := range []*regexp.Regexp{numericDate, textualDate} {
		if m := re.FindStringIndex(t); m != nil && m[0] <= 1 {
			return true
		}
	}
	return false
}

// dayFirstWords are words only documents in a continental European language
// print (labels and table headings), by language.
var dayFirstWords = map[string][]string{
	"German":  {"bestellung", "bestellnummer", "lieferdatum", "liefertermin", "menge", "einzelpreis", "betrag", "gesamtbetrag", "datum", "lieferant", "mwst", "zahlungsbedingungen"},
	"French":  {"commande", "fournisseur", "livraison", "quantité", "quantite", "prix", "montant", "désignation", "tva"},
	"Dutch":   {"bestelling", "inkooporder", "leverancier", "aantal", "prijs", "bedrag", "omschrijving", "btw", "leverdatum", "besteldatum"},
	"Spanish": {"pedido", "proveedor", "cantidad", "precio", "importe", "fecha", "entrega", "descripción", "iva"},
	"Italian": {"ordine", "fornitore", "quantità", "prezzo", "importo", "consegna", "descrizione", "data", "iva", "totale"},
}

// englishWords are the same labels in English.
var englishWords = []string{"purchase", "order", "quantity", "price", "amount", "vendor", "supplier", "delivery", "date", "total", "description", "ship"}

// continentalLanguage names the continental European language the
// document is written in, "" when it is none of them (or English words
// outnumber them: an English form with a German address is English).
func continentalLanguage(text string) string {
	count := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		count[w]++
	}
	sum := func(words []string) int {
		n := 0
		for _, w := range words {
			n += count[w]
		}
		return n
	}
	best, n := "", 0
	for lang, words := range dayFirstWords {
		if c := sum(words); c > n || c == n && lang < best {
			best, n = lang, c
		}
	}
	if n < 3 || sum(englishWords) >= n {
		return ""
	}
	return best
}
