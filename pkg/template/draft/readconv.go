package draft

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/docintake/docintake/pkg/template"
)

// Conventions from a proven reading: the reader has read every number and
// date it kept into canonical form, so the printed text at its position
// shows the separators and the date format without guessing.

// numberVotes counts what printed numbers show about the separators.
type numberVotes struct {
	dec, group map[string]int
	indian     int // integer parts grouped 2-2-3 (12,34,567)
	n          int
}

var (
	numChars    = regexp.MustCompile(`[\d.,' ]*\d`)
	indianGroup = regexp.MustCompile(`^\d{1,2}(?:,\d{2})+,\d{3}$`)
)

// add records one number: as printed (currency signs and all) and as the
// reader read it.
func (v *numberVotes) add(printed, canon string) {
	all := numChars.FindAllString(printed, -1)
	if len(all) == 0 {
		return
	}
	p := strings.Trim(all[len(all)-1], ".,' ")
	if p == "" || canon == "" {
		return
	}
	intPart := p
	if _, frac, ok := strings.Cut(canon, "."); ok {
		n := len(frac)
		if len(p) < n+2 {
			return
		}
		sep := p[len(p)-n-1 : len(p)-n]
		if sep != "." && sep != "," {
			return
		}
		v.dec[sep]++
		intPart = p[:len(p)-n-1]
	}
	for _, r := range intPart {
		if r < '0' || r > '9' {
			v.group[string(r)]++
			if r == '.' || r == ',' {
				v.dec[map[rune]string{'.': ",", ',': "."}[r]]++
			}
			break
		}
	}
	if indianGroup.MatchString(intPart) {
		v.indian++
	}
	v.n++
}

// conv decides the convention from the votes; ok is false when no printed
// number shows a separator (the sample's own detection stands).
func (v *numberVotes) conv() (numberConv, bool) {
	if len(v.dec) == 0 {
		return numberConv{}, false
	}
	nc := numberConv{Decimal: maxKey(v.dec)}
	delete(v.group, nc.Decimal)
	if len(v.group) > 0 {
		nc.Group = maxKey(v.group)
	}
	nc.Indian = nc.Decimal == "." && nc.Group == "," && v.indian > 0
	nc.Why = fmt.Sprintf("as the generic reader read %d printed numbers", v.n)
	if nc.Group != "" {
		nc.Why += fmt.Sprintf("; thousands grouped with %q", nc.Group)
	}
	if nc.Indian {
		nc.Why += " (Indian 2-2-3 grouping)"
	}
	return nc, true
}

// dateFormats are the printed date formats a proven date is tried with.
var dateFormats = []string{
	"%d.%m.%Y", "%d.%m.%y", "%d/%m/%Y", "%d/%m/%y", "%m/%d/%Y", "%m/%d/%y", "%d-%m-%Y", "%d-%m-%y", "%m-%d-%Y",
	"%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%d %m %Y", "%Y%m%d",
	"%d %B %Y", "%d. %B %Y", "%d.%B %Y", "%B %d, %Y", "%B %d %Y", "%d-%B-%y", "%d %B, %Y", "%d/%B/%Y",
	"%d %B %y", "%d/%B/%y", "%d.%B.%Y", "%d.%B.%y", "%d-%B-%Y", "%B %d, %y",
	"%A, %d %B %Y", "%A, %B %d, %Y", "%A %d %B %Y", "%A, %d. %B %Y",
}

// formatPattern turns a strptime format into a pattern: strict (the
// directive's own range, to tell day from month) or loose (any date of the
// format, for the drafted regex).
func formatPattern(format string, strict bool) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '%' && i+1 < len(format) {
			i++
			switch format[i] {
			case 'd':
				b.WriteString(map[bool]string{true: `(?:3[01]|[12]\d|0[1-9]|[1-9])`, false: `\d{1,2}`}[strict])
			case 'm':
				b.WriteString(map[bool]string{true: `(?:1[0-2]|0[1-9]|[1-9])`, false: `\d{1,2}`}[strict])
			case 'Y':
				b.WriteString(`\d{4}`)
			case 'y':
				b.WriteString(`\d{2}`)
			case 'B', 'b':
				b.WriteString(`[^\W\d_]{3,}\.?`)
			case 'A', 'a':
				b.WriteString(`[^\W\d_]{2,}\.?`)
			}
			continue
		}
		if c == ' ' {
			b.WriteString(`[ \t]+`)
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(c)))
	}
	return b.String()
}

// dateHit is a proven date as printed: where in the text searched and the
// formats that read it as the reader did ("" for a textual date only the
// built-in parser reads, such as "1er juillet 2024").
type dateHit struct {
	start, end int // rune offsets
	formats    []string
}

// strictDates are the formats' strict patterns, a printed date in group 1.
var strictDates = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(dateFormats))
	for i, f := range dateFormats {
		out[i] = regexp.MustCompile(`(?i)(?:^|[^\pL\pN])(` + formatPattern(f, true) + `)(?:$|[^\pL\pN])`)
	}
	return out
}()

// findDate finds the printed form of the canonical date canon (YYYY-MM-DD)
// in text: the longest printed date that some format reads as canon.
func findDate(text, canon string) (dateHit, bool) {
	var best dateHit
	found := false
	consider := func(m []int, f string) {
		s, e := runeIndex(text, m[0]), runeIndex(text, m[1])
		switch {
		case !found || e-s > best.end-best.start:
			best, found = dateHit{start: s, end: e, formats: []string{f}}, true
		case s == best.start && e == best.end:
			best.formats = append(best.formats, f)
		}
	}
	for i, f := range dateFormats {
		for _, m := range strictDates[i].FindAllStringSubmatchIndex(text, -1) {
			d, err := template.ParseDate(text[m[2]:m[3]], []string{f}, nil)
			if err == nil && d.String() == canon {
				consider(m[2:4], f)
			}
		}
	}
	if !found {
		for _, m := range textDate.FindAllStringIndex(text, -1) {
			if d, err := template.ParseDate(text[m[0]:m[1]], nil, nil); err == nil && d.String() == canon {
				consider(m, "")
			}
		}
	}
	return best, found
}

var textDate = regexp.MustCompile(textDateRe)

// runeIndex converts a byte offset of s to a rune offset.
func runeIndex(s string, byteOff int) int { return len([]rune(s[:byteOff])) }

// sameNumber compares two decimals by value ("24" and "24.00" are one).
func sameNumber(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}
