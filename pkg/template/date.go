package template

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/docintake/docintake/pkg/order"
)

// monthNames maps lower-case month names and abbreviations (English, German,
// French, Dutch, Spanish, Italian) to months. Names shared between languages
// always mean the same month, so no language choice is needed.
var monthNames = func() map[string]time.Month {
	lists := [][]string{
		{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"},
		{"januar", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober", "november", "dezember"},
		{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"},
		{"januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober", "november", "december"},
		{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"},
		{"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"},
		{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
		{"jän", "feb", "mär", "apr", "mai", "jun", "jul", "aug", "sept", "okt", "nov", "dez"},
		{"janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc"},
		{"jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec"},
		{"ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"},
		{"gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"},
	}
	m := map[string]time.Month{}
	for _, l := range lists {
		for i, n := range l {
			m[n] = time.Month(i + 1)
			if a := stripAccents(n); a != n {
				m[a] = time.Month(i + 1)
			}
		}
	}
	m["maerz"] = time.March
	m["fevr"] = time.February
	return m
}()

var weekdayNames = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun " +
		"montag dienstag mittwoch donnerstag freitag samstag sonntag mo di mi do fr sa so " +
		"lundi mardi mercredi jeudi vendredi samedi dimanche lun mer jeu ven sam dim " +
		"maandag dinsdag woensdag donderdag vrijdag zaterdag zondag ma wo vr za zo") {
		m[w] = true
	}
	return m
}()

// fillerWords may stand between the parts of a textual date ("3rd of May",
// "le 3 mai", "den 3. Mai").
var fillerWords = map[string]bool{"of": true, "the": true, "de": true, "le": true, "den": true, "der": true, "am": true, "du": true, "del": true, "st": true, "nd": true, "rd": true, "th": true, "er": true}

func stripAccents(s string) string {
	r := strings.NewReplacer("ä", "a", "é", "e", "è", "e", "û", "u", "ô", "o", "à", "a", "ç", "c", "ö", "o", "ü", "u")
	return r.Replace(s)
}

// ParseDate parses a date as a template field value. The template's
// date_formats (Python strptime syntax) are tried first; then ISO dates
// (2024-05-07), textual dates with month names (7. Mai 2014, August 3, 2014,
// 18 april 2014) and numeric dates whose day and month cannot be confused
// (31/12/2024). A numeric date such as 01/08/2024 is ambiguous: when the
// template has date_formats, the order of %d and %m in its first format
// decides (the author has said how this buyer writes dates); without
// date_formats it is an error, never a guess.
func ParseDate(value string, formats, languages []string) (order.Date, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return order.Date{}, fmt.Errorf("empty date")
	}
	for _, f := range formats {
		if d, ok := strptime(v, f); ok {
			return d, nil
		}
	}
	return parseDateFallback(v, formatDayFirst(formats))
}

// formatDayFirst returns +1 when the first format with both %d and %m puts
// the day first, -1 when the month comes first and 0 when no format says.
func formatDayFirst(formats []string) int {
	for _, f := range formats {
		d, m := strings.Index(f, "%d"), strings.Index(f, "%m")
		if d >= 0 && m >= 0 {
			if d < m {
				return 1
			}
			return -1
		}
	}
	return 0
}

var (
	isoDate   = regexp.MustCompile(`^(\d{4})[-./](\d{1,2})[-./](\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$`)
	compact   = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})$`)
	timeOfDay = regexp.MustCompile(`(?i)\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s*[ap]\.?m\.?)?`)
)

func parseDateFallback(v string, dayFirst int) (order.Date, error) {
	if m := isoDate.FindStringSubmatch(v); m != nil {
		return mkDate(v, atoi(m[1]), atoi(m[2]), atoi(m[3]))
	}
	if m := compact.FindStringSubmatch(v); m != nil {
		return mkDate(v, atoi(m[1]), atoi(m[2]), atoi(m[3]))
	}
	s := timeOfDay.ReplaceAllString(v, " ")
	var nums []string
	month := time.Month(0)
	for _, tok := range dateTokens(s) {
		lt := strings.ToLower(tok)
		switch {
		case isDigits(tok):
			nums = append(nums, tok)
		case digitsWithSuffix(lt) != "":
			nums = append(nums, digitsWithSuffix(lt))
		case monthNames[lt] != 0:
			if month != 0 {
				return order.Date{}, fmt.Errorf("date %q names two months", v)
			}
			month = monthNames[lt]
		case weekdayNames[lt] || fillerWords[lt]:
		default:
			return order.Date{}, fmt.Errorf("date %q: unrecognised word %q", v, tok)
		}
	}
	if month != 0 {
		if len(nums) != 2 {
			return order.Date{}, fmt.Errorf("date %q: expected a day and a year next to the month name", v)
		}
		day, year := nums[0], nums[1]
		if len(day) == 4 || (len(day) <= 2 && len(year) <= 2 && atoi(day) > 31) {
			day, year = year, day
		}
		return mkDate(v, fullYear(year), int(month), atoi(day))
	}
	if len(nums) != 3 {
		return order.Date{}, fmt.Errorf("date %q is not a date", v)
	}
	if len(nums[0]) == 4 {
		return mkDate(v, atoi(nums[0]), atoi(nums[1]), atoi(nums[2]))
	}
	if len(nums[2]) != 4 && len(nums[2]) != 2 {
		return order.Date{}, fmt.Errorf("date %q is not a date", v)
	}
	a, b, y := atoi(nums[0]), atoi(nums[1]), fullYear(nums[2])
	switch {
	case a == b, a > 12 && b <= 12:
		return mkDate(v, y, b, a)
	case b > 12 && a <= 12:
		return mkDate(v, y, a, b)
	case a > 12 && b > 12:
		return order.Date{}, fmt.Errorf("date %q has no month", v)
	case dayFirst > 0:
		return mkDate(v, y, b, a)
	case dayFirst < 0:
		return mkDate(v, y, a, b)
	}
	return order.Date{}, fmt.Errorf("date %q is ambiguous (day/month or month/day): set options.date_formats", v)
}

// dateTokens splits on everything but letters and digits.
func dateTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func digitsWithSuffix(s string) string {
	for _, suf := range []string{"st", "nd", "rd", "th", "er", "e"} {
		if p, ok := strings.CutSuffix(s, suf); ok && p != "" && len(p) <= 2 && isDigits(p) {
			return p
		}
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// fullYear maps two-digit years as Python's strptime %y does (69–99 → 19xx).
func fullYear(s string) int {
	y := atoi(s)
	if len(s) <= 2 {
		if y < 69 {
			return 2000 + y
		}
		return 1900 + y
	}
	return y
}

func mkDate(v string, y, m, d int) (order.Date, error) {
	if y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 {
		return order.Date{}, fmt.Errorf("date %q is out of range", v)
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return order.Date{}, fmt.Errorf("date %q: day %d does not exist in %s %d", v, d, time.Month(m), y)
	}
	return order.Date{Year: y, Month: time.Month(m), Day: d}, nil
}

var strptimeCache sync.Map // format → *strptimeFormat

type strptimeFormat struct {
	re    *regexp.Regexp
	parts []byte // directive letter per capture group
}

// strptime matches v against a Python strptime format (whole string, case
// insensitive, whitespace in the format matching any whitespace).
func strptime(v, format string) (order.Date, bool) {
	var f *strptimeFormat
	if c, ok := strptimeCache.Load(format); ok {
		f = c.(*strptimeFormat)
	} else {
		f = compileStrptime(format)
		strptimeCache.Store(format, f)
	}
	if f == nil {
		return order.Date{}, false
	}
	m := f.re.FindStringSubmatch(v)
	if m == nil {
		return order.Date{}, false
	}
	y, mo, d := 1900, 1, 1
	for i, p := range f.parts {
		s := m[i+1]
		switch p {
		case 'Y':
			y = atoi(s)
		case 'y':
			y = fullYear(s)
		case 'm':
			mo = atoi(s)
		case 'd':
			d = atoi(strings.TrimSpace(s))
		case 'B', 'b':
			mo = int(monthNames[strings.ToLower(strings.TrimSuffix(s, "."))])
		}
	}
	date, err := mkDate(v, y, mo, d)
	return date, err == nil
}

func compileStrptime(format string) *strptimeFormat {
	var months []string
	for n := range monthNames {
		months = append(months, regexp.QuoteMeta(n))
	}
	// Longest first so "september" wins over "sep".
	sortByLenDesc(months)
	monthAlt := "(" + strings.Join(months, "|") + `)\.?`
	var weekdays []string
	for n := range weekdayNames {
		weekdays = append(weekdays, n)
	}
	sortByLenDesc(weekdays)
	var b strings.Builder
	b.WriteString(`(?i)^`)
	var parts []byte
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '%' && i+1 < len(format) {
			i++
			d := format[i]
			switch d {
			case 'Y':
				b.WriteString(`(\d{4})`)
			case 'y':
				b.WriteString(`(\d{2})`)
			case 'm':
				b.WriteString(`(1[0-2]|0[1-9]|[1-9])`)
			case 'd':
				b.WriteString(`(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])`)
			case 'B', 'b':
				b.WriteString(monthAlt)
			case 'A', 'a':
				b.WriteString(`(?:` + strings.Join(weekdays, "|") + `)\.?`)
				continue
			case 'H', 'I', 'M', 'S':
				b.WriteString(`(?:\d{1,2})`)
				continue
			case 'p':
				b.WriteString(`(?:am|pm)`)
				continue
			case 'f':
				b.WriteString(`(?:\d{1,6})`)
				continue
			case 'j':
				b.WriteString(`(?:\d{1,3})`)
				continue
			case 'z':
				b.WriteString(`(?:[+-]\d{2}:?\d{2}|Z)?`)
				continue
			case 'Z':
				b.WriteString(`(?:[A-Za-z]{1,5})?`)
				continue
			case '%':
				b.WriteString("%")
				continue
			default:
				return nil
			}
			parts = append(parts, d)
			continue
		}
		if unicode.IsSpace(rune(c)) {
			for i+1 < len(format) && unicode.IsSpace(rune(format[i+1])) {
				i++
			}
			b.WriteString(`\s+`)
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(c)))
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil
	}
	return &strptimeFormat{re: re, parts: parts}
}

func sortByLenDesc(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && (len(s[j]) > len(s[j-1]) || len(s[j]) == len(s[j-1]) && s[j] < s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
