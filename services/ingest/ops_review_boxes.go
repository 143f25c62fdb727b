package ingest

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pdftext"
)

// Where the review page draws a value's box: the words of the page images
// (pdftotext -bbox-layout) that print it. The reading keeps values, not
// positions, so a value is looked for as it could have been printed: text
// word by word ignoring case and punctuation around words, a number in
// any grouping and decimal separator ("3,115.00", "3.115,00", "$3115"),
// a date in the usual formats ("8/29/2019", "29.08.2019",
// "29-Aug-2019"). An item's values are looked for on the row of its
// article number or description, so a quantity "4" is not taken from
// somewhere else on the page.

// box is where a value was found: page number and the rectangle in
// percent of the page, which the page's JavaScript lays over the image.
type box struct {
	Page       int
	L, T, W, H float64
}

// attr is the box as the page carries it (data-box).
func (b box) attr() string {
	return fmt.Sprintf("%.3f,%.3f,%.3f,%.3f", b.L, b.T, b.W, b.H)
}

// wordSpan is a run of words on one line of a page that matched a value.
// exact: it prints the value's digits as they are ("20.00", not "20").
type wordSpan struct {
	page           int // index in the layout
	x0, y0, x1, y1 float64
	exact          bool
}

func (s wordSpan) box(p pdftext.PageInfo) box {
	return box{Page: p.Number, L: s.x0 / p.Width * 100, T: s.y0 / p.Height * 100,
		W: (s.x1 - s.x0) / p.Width * 100, H: (s.y1 - s.y0) / p.Height * 100}
}

// valueKind says how a value may have been printed.
type valueKind int

const (
	kindText valueKind = iota
	kindDecimal
	kindDate
)

// maxSpanWords is the longest run of words a number or date is printed in
// ("USD 1 234,50", "Aug 29, 2019").
const maxSpanWords = 3

// locator finds values on a layout's pages.
type locator struct {
	pages []pdftext.PageInfo
	lines [][][]pdftext.Word // per page, the words of each line in order
}

func newLocator(l *pdftext.Layout) *locator {
	loc := &locator{}
	if l == nil {
		return loc
	}
	for _, p := range l.Pages {
		if p.DPI == 0 || p.Width <= 0 || p.Height <= 0 {
			// Not drawn: nothing to lay a box on.
			p.Words = nil
		}
		loc.pages = append(loc.pages, p)
		var lines [][]pdftext.Word
		for i, w := range p.Words {
			if i == 0 || w.Line != p.Words[i-1].Line {
				lines = append(lines, nil)
			}
			lines[len(lines)-1] = append(lines[len(lines)-1], w)
		}
		loc.lines = append(loc.lines, lines)
	}
	return loc
}

// find returns the spans printing value, in reading order (page, then top
// to bottom, then left to right as pdftotext lists them). within, when
// not nil, keeps only spans it accepts.
func (loc *locator) find(value string, kind valueKind, within func(wordSpan) bool) []wordSpan {
	m := matcherFor(value, kind)
	if m == nil {
		return nil
	}
	var out []wordSpan
	for pi, lines := range loc.lines {
		for _, line := range lines {
			out = append(out, m.spans(pi, line, within)...)
		}
	}
	return out
}

// first is the box of the first span printing value, one printing it
// exactly if there is one; last the last (a total is printed below what
// it sums).
func (loc *locator) first(value string, kind valueKind, last bool) (box, bool) {
	spans := loc.find(value, kind, nil)
	if len(spans) == 0 {
		return box{}, false
	}
	if last {
		slices.Reverse(spans)
	}
	best := spans[0]
	for _, s := range spans {
		if s.exact {
			best = s
			break
		}
	}
	return best.box(loc.pages[best.page]), true
}

// matcher decides whether a run of words prints a value.
type matcher struct {
	words int // run lengths tried: exactly words, or 1..words when loose
	loose bool
	match func(text string) (ok, exact bool)
}

func matcherFor(value string, kind valueKind) *matcher {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil
	}
	switch kind {
	case kindDecimal:
		want := order.Rat(value)
		if want == nil {
			return nil
		}
		digits := onlyDigits(value)
		return &matcher{words: maxSpanWords, loose: true, match: func(s string) (bool, bool) {
			return printsNumber(s, want), onlyDigits(s) == digits
		}}
	case kindDate:
		want, err := time.Parse(time.DateOnly, value)
		if err != nil {
			return nil
		}
		return &matcher{words: maxSpanWords, loose: true, match: func(s string) (bool, bool) { return printsDate(s, want), true }}
	}
	tokens := strings.Fields(normalText(value))
	if len(tokens) == 0 {
		return nil
	}
	want := strings.Join(tokens, " ")
	return &matcher{words: len(tokens), match: func(s string) (bool, bool) { return normalText(s) == want, true }}
}

// spans tries every run of words of one line.
func (m *matcher) spans(page int, line []pdftext.Word, within func(wordSpan) bool) []wordSpan {
	var out []wordSpan
	for i := range line {
		lo, hi := m.words, m.words
		if m.loose {
			lo = 1
		}
		for n := lo; n <= hi && i+n <= len(line); n++ {
			run := line[i : i+n]
			texts := make([]string, n)
			for j, w := range run {
				texts[j] = w.Text
			}
			ok, exact := m.match(strings.Join(texts, " "))
			if !ok {
				continue
			}
			s := wordSpan{page: page, x0: run[0].X0, y0: run[0].Y0, x1: run[0].X1, y1: run[0].Y1, exact: exact}
			for _, w := range run[1:] {
				s.x0, s.y0, s.x1, s.y1 = math.Min(s.x0, w.X0), math.Min(s.y0, w.Y0), math.Max(s.x1, w.X1), math.Max(s.y1, w.Y1)
			}
			if within == nil || within(s) {
				out = append(out, s)
			}
			break // the shortest run at i
		}
	}
	return out
}

// onlyDigits keeps the digits of s: "3,115.00" and "3115.00" both print
// 311500.
func onlyDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// normalText lowercases s and drops the punctuation around its words
// ("Micro-Motor #5," reads "micro-motor #5").
func normalText(s string) string {
	fields := strings.Fields(strings.ToLower(s))
	for i, f := range fields {
		fields[i] = strings.Trim(f, `,;:.()[]"'`)
	}
	return strings.Join(fields, " ")
}

// printsNumber reports whether s prints want: digits with grouping and
// either convention of separators, with nothing around them but a sign,
// parentheses, a percent sign, a currency sign or code ("$3,115.00",
// "3.115,00 EUR", "(-)0.37"); "#5" and "Total 20.00" are not numbers.
func printsNumber(s string, want *big.Rat) bool {
	s = strings.TrimSpace(s)
	start := strings.IndexFunc(s, isDigit)
	end := strings.LastIndexFunc(s, isDigit) + 1
	if start < 0 {
		return false
	}
	prefix, body, suffix := s[:start], s[start:end], s[end:]
	if p := strings.TrimRight(prefix, ".,"); len(p) == len(prefix)-1 && (p == "" || !unicode.IsLetter(rune(p[len(p)-1]))) {
		prefix, body = p, prefix[len(p):]+body // ".5", but not "Rs.5"
	}
	if !numberAffix(prefix) || !numberAffix(suffix) {
		return false
	}
	var digits strings.Builder
	for _, r := range body {
		switch {
		case isDigit(r), r == '.', r == ',':
			digits.WriteRune(r)
		case r == ' ', r == '\u00a0', r == '\'':
			// grouping
		default:
			return false // "12abc34" is no number
		}
	}
	neg := strings.Contains(prefix, "-") || strings.HasPrefix(suffix, "-")
	for _, c := range numberReadings(digits.String()) {
		r, ok := new(big.Rat).SetString(c)
		if !ok {
			continue
		}
		if neg {
			r.Neg(r)
		}
		if r.Cmp(want) == 0 {
			return true
		}
	}
	return false
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// numberAffix reports whether a may stand before or after a printed
// number: signs, parentheses, percent, currency signs and a currency code
// of up to three letters ("USD", "Rs.").
func numberAffix(a string) bool {
	letters := 0
	for _, r := range a {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.Is(unicode.Sc, r), unicode.IsSpace(r), strings.ContainsRune("+-()%.", r):
		default:
			return false
		}
	}
	return letters <= 3
}

// numberReadings are the decimals s can mean: the separator that comes
// last is the decimal one when both occur; a lone separator may be either.
func numberReadings(s string) []string {
	dot, comma := strings.LastIndex(s, "."), strings.LastIndex(s, ",")
	switch {
	case dot < 0 && comma < 0:
		return []string{s}
	case dot >= 0 && comma >= 0 && dot > comma:
		return []string{strings.ReplaceAll(s, ",", "")}
	case dot >= 0 && comma >= 0:
		return []string{strings.ReplaceAll(strings.ReplaceAll(s, ".", ""), ",", ".")}
	case dot >= 0:
		return []string{s, strings.ReplaceAll(s, ".", "")}
	default:
		return []string{strings.ReplaceAll(s, ",", "."), strings.ReplaceAll(s, ",", "")}
	}
}

// dateLayouts are the date formats of the corpus's orders (LAYOUTS.md §3).
var dateLayouts = []string{
	"1/2/2006", "1/2/06", "2/1/2006", "2/1/06", "2.1.2006", "2.1.06", "2-1-2006", "1-2-2006", "2006-01-02",
	"2006/01/02", "2-Jan-2006", "2-Jan-06", "2 Jan 2006", "2 Jan, 2006", "Jan 2, 2006", "January 2, 2006",
	"2 January 2006", "2/Jan/06", "2/Jan/2006", "2. January 2006",
}

// printsDate reports whether s prints want in one of dateLayouts (month
// names match in any case: "29-AUG-2019").
func printsDate(s string, want time.Time) bool {
	s = strings.Trim(strings.TrimSpace(s), ",;")
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil && t.Equal(want) {
			return true
		}
	}
	return false
}
