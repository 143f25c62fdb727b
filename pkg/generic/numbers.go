package generic

import (
	"math/big"
	"regexp"
	"strings"

	"github.com/docintake/docintake/pkg/template"
)

// Number shapes that tell the document's decimal separator. A group of
// one or two digits after the last separator is a fraction; a full grouped
// number with both separators tells which is which.
var (
	dotDecimal   = regexp.MustCompile(`^\d{1,3}(?:,\d{2,3})+\.\d+$|^\d+\.\d{1,2}$|^\d+\.\d{4,5}$`)
	commaDecimal = regexp.MustCompile(`^\d{1,3}(?:[.' ]\d{3})+,\d+$|^\d+,\d{1,2}$|^\d+,\d{4,5}$`)
	// numberCore is what remains of an amount once symbols, codes and
	// signs are taken off.
	numberCore   = regexp.MustCompile(`^\d[\d.,'’]*$`)
	spaceGrouped = regexp.MustCompile(`^\d{1,3}(?: \d{3})+(?:[.,]\d+)?$`)
)

// currencySymbols map printed symbols to ISO codes. "$" is read as the US
// dollar, the currency every one of the North American POs seen prints it
// for; other dollars print their own prefix (C$, A$, CA$).
var currencySymbols = []struct{ sym, code string }{
	{"US$", "USD"}, {"CA$", "CAD"}, {"C$", "CAD"}, {"A$", "AUD"}, {"AU$", "AUD"}, {"NZ$", "NZD"}, {"S$", "SGD"},
	{"$", "USD"}, {"€", "EUR"}, {"£", "GBP"}, {"₹", "INR"}, {"Rs.", "INR"}, {"Rs", "INR"}, {"¥", "JPY"}, {"Fr.", "CHF"},
}

// isoCodes are the currencies read from codes printed as words.
var isoCodes = map[string]bool{}

func init() {
	for _, c := range strings.Fields("USD EUR GBP CHF INR CAD AUD NZD JPY CNY RMB HKD SGD SEK NOK DKK PLN CZK HUF RON BGN " +
		"TRY ZAR MXN BRL ARS CLP COP PEN AED SAR QAR KWD BHD OMR ILS EGP MAD TND KRW TWD THB MYR IDR PHP VND PKR BDT LKR NPR") {
		isoCodes[c] = true
	}
}

// conv is a document's number convention.
type conv struct {
	dec string // "." or ","
	// unproven is set when no number shows the separator and some number
	// reads differently under the two ("2.500", "267,569").
	unproven bool
}

// threeDecimals reads as thousands or as three decimals.
var threeDecimals = regexp.MustCompile(`^\d{1,3}[.,]\d{3}$`)

// detectConv votes on the decimal separator over every number-shaped word
// of the document; "." wins a tie.
func detectConv(d *doc) conv {
	dot, comma, either := 0, 0, 0
	for _, l := range d.lines {
		for _, c := range l.cells {
			// Only a number standing alone tells: "Ø 8.5 mm" in a
			// description is written in whatever the article's maker uses.
			if len(c.words) > 2 || len(c.words) == 2 && !isCurrencyWord(c.words[0].text) && !isCurrencyWord(c.words[1].text) {
				continue
			}
			for _, w := range c.words {
				core, _, _ := splitAmount(w.text)
				switch {
				case dotDecimal.MatchString(core):
					dot++
				case commaDecimal.MatchString(core):
					comma++
				case threeDecimals.MatchString(core):
					either++
				}
			}
		}
	}
	if comma > dot {
		return conv{dec: ","}
	}
	return conv{dec: ".", unproven: dot == 0 && comma == 0 && either > 0}
}

// isCurrencyWord reports whether a word is a currency code or symbol
// printed apart from its amount ("EUR 1.234,56", "$ 1,480.00").
func isCurrencyWord(w string) bool {
	if isoCodes[w] {
		return true
	}
	for _, cs := range currencySymbols {
		if w == cs.sym {
			return true
		}
	}
	return false
}

// splitAmount takes a printed amount apart: its digits and separators,
// the currency code or symbol glued to it, and whether it is negative
// ("-12.50", "(12.50)", "(-)0.37", "12.50-").
func splitAmount(s string) (core, currency string, neg bool) {
	s = strings.TrimSpace(s)
	for _, p := range []string{"(-)", "-", "(", "+"} {
		if strings.HasPrefix(s, p) {
			neg = neg || p != "+"
			s = strings.TrimSpace(s[len(p):])
		}
	}
	s = strings.TrimSuffix(s, ")")
	if strings.HasSuffix(s, "-") {
		neg, s = true, strings.TrimSuffix(s, "-")
	}
	for _, cs := range currencySymbols {
		if strings.HasPrefix(s, cs.sym) {
			currency, s = cs.code, strings.TrimSpace(s[len(cs.sym):])
			break
		}
		if strings.HasSuffix(s, cs.sym) {
			currency, s = cs.code, strings.TrimSpace(s[:len(s)-len(cs.sym)])
			break
		}
	}
	if len(s) > 3 && isoCodes[s[:3]] {
		currency, s = s[:3], strings.TrimSpace(s[3:])
	} else if len(s) > 3 && isoCodes[s[len(s)-3:]] {
		currency, s = s[len(s)-3:], strings.TrimSpace(s[:len(s)-3])
	}
	if strings.HasPrefix(s, "-") { // "$-12.00"
		neg, s = true, s[1:]
	}
	return s, currency, neg
}

// amount parses one printed amount in the document's convention and
// returns the canonical decimal.
func (cv conv) amount(s string) (string, bool) {
	core, _, neg := splitAmount(s)
	if spaceGrouped.MatchString(core) {
		core = strings.ReplaceAll(core, " ", "")
	}
	if !numberCore.MatchString(core) {
		return "", false
	}
	v, err := template.ParseAmount(strings.ReplaceAll(core, "’", "'"), cv.dec)
	if err != nil {
		return "", false
	}
	if neg && v != "0" && !strings.HasPrefix(v, "-") {
		v = "-" + v
	}
	return v, true
}

// close reports whether a and b differ by at most tol.
func closeTo(a, b *big.Rat, tol *big.Rat) bool {
	d := new(big.Rat).Sub(a, b)
	return d.Abs(d).Cmp(tol) <= 0
}
