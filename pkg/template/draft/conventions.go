package draft

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// numberConv is how a buyer prints numbers: the decimal separator and the
// thousands grouping character ("" when no grouped number was seen).
type numberConv struct {
	Decimal string
	Group   string
	// Indian is set for lakh grouping (12,34,567.00), which a proven
	// reading shows.
	Indian bool
	Why    string
}

var (
	// A grouped number with a decimal part: the strongest evidence, as both
	// separators are visible and differ (1.234,56 · 1,234.56 · 1'234.56 · 1 234,56).
	groupedDec = regexp.MustCompile(`(?:^|[^\d.,'])\d{1,3}((?:[.,' ]\d{3})+)([.,])\d{1,3}(?:$|[^\d])`)
	// A number with exactly two decimals and no grouping (12,50 · 12.50).
	twoDec = regexp.MustCompile(`(?:^|[^\d.,/:-])\d+([.,])\d{2}(?:$|[^\d.,/:-])`)
	// A grouped integer without decimals (2.400 · 1,000 · 1'000).
	groupedInt = regexp.MustCompile(`(?:^|[^\d.,'/:-])\d{1,3}((?:[.,']\d{3})+)(?:$|[^\d.,'/:-])`)
)

// detectNumbers decides the decimal separator and the grouping from the
// numbers printed in the samples' texts.
func detectNumbers(texts []string) numberConv {
	count := map[string]int{} // "dec group" pairs from grouped decimals
	dec := map[string]int{}
	groups := map[string]int{}
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			l = stripDates(l)
			for _, m := range groupedDec.FindAllStringSubmatch(l, -1) {
				g := m[1][:1]
				if g == m[2] || strings.Contains(m[1][1:], m[2]) {
					continue
				}
				if !uniform(m[1]) {
					continue
				}
				count[m[2]+" "+g]++
				dec[m[2]] += 3
			}
			for _, m := range twoDec.FindAllStringSubmatch(l, -1) {
				dec[m[1]]++
			}
			for _, m := range groupedInt.FindAllStringSubmatch(l, -1) {
				if uniform(m[1]) {
					groups[m[1][:1]]++
				}
			}
		}
	}
	nc := numberConv{Decimal: "."}
	switch {
	case dec[","] > dec["."]:
		nc.Decimal = ","
	case dec[","] == 0 && dec["."] == 0:
		nc.Why = "no decimal number in the samples; assumed '.'"
	}
	if nc.Why == "" {
		nc.Why = fmt.Sprintf("%d numbers with decimal ',' against %d with '.'", dec[","], dec["."])
	}
	best, bestN := "", 0
	for k, n := range count {
		d, g, _ := strings.Cut(k, " ")
		if d == nc.Decimal && (n > bestN || n == bestN && g < best) {
			best, bestN = g, n
		}
	}
	if best == "" {
		// Grouped integers (2.400) tell the grouping when no grouped
		// decimal was printed; the decimal separator cannot group.
		for g, n := range groups {
			if g != nc.Decimal && (n > bestN || n == bestN && g < best) {
				best, bestN = g, n
			}
		}
	}
	nc.Group = best
	if best != "" {
		nc.Why += fmt.Sprintf("; thousands grouped with %q (%d numbers)", best, bestN)
	} else {
		nc.Why += "; no grouped number seen"
	}
	return nc
}

func uniform(groups string) bool {
	for i := 0; i < len(groups); i += 4 {
		if groups[i] != groups[0] {
			return false
		}
	}
	return true
}

// numberRe is the pattern for one number in this convention: grouped or
// plain, optional decimals, optional sign.
func (nc numberConv) numberRe() string {
	d := regexp.QuoteMeta(nc.Decimal)
	g := nc.groupClass()
	if nc.Indian {
		return `-?(?:\d{1,2}(?:,\d{2})+,\d{3}|\d{1,3}(?:,\d{3})+|\d+)(?:` + d + `\d+)?`
	}
	return `-?(?:\d{1,3}(?:` + g + `\d{3})+|\d+)(?:` + d + `\d+)?`
}

func (nc numberConv) groupClass() string {
	switch nc.Group {
	case "":
		if nc.Decimal == "," {
			return `\.`
		}
		return `,`
	case " ":
		return ` `
	case "'":
		return `'`
	}
	return regexp.QuoteMeta(nc.Group)
}

// numberTok matches one number in this convention as a whole token.
func (nc numberConv) numberTok() *regexp.Regexp {
	return regexp.MustCompile(`^(?:` + nc.numberRe() + `)$`)
}

// dateConv is the numeric date format of the samples.
type dateConv struct {
	Format string // strptime format, "" when no numeric date was seen
	Sep    string
	Year   int // digits of the year
	// Pattern matches a date of Format when the format was read off a
	// proven date (textual months, year first, …); "" for the numeric
	// formats the samples' dates show.
	Pattern string
	Why     string
}

var numericDate = regexp.MustCompile(`(?:^|[^\d.,/-])(\d{1,2})([./-])(\d{1,2})([./-])(\d{4}|\d{2})(?:$|[^\d.,/-])`)
var isoDateRe = regexp.MustCompile(`(?:^|[^\d])(\d{4})-(\d{2})-(\d{2})(?:$|[^\d])`)

// stripDates blanks numeric dates so that number detection does not take
// 07.07.2024 for a grouped number.
func stripDates(l string) string {
	l = numericDate.ReplaceAllStringFunc(l, func(s string) string { return strings.Repeat(" ", len(s)) })
	return isoDateRe.ReplaceAllStringFunc(l, func(s string) string { return strings.Repeat(" ", len(s)) })
}

// detectDates decides day-first or month-first from the numeric dates of
// the samples; a date with a part above 12 decides, else the separator and
// the number convention (US dates use '/' and a decimal point with USD).
func detectDates(texts []string, nc numberConv, dollar bool) dateConv {
	seps := map[string]int{}
	years := map[int]int{}
	dayFirst, monthFirst := 0, 0
	var dayEx, monthEx string
	iso := 0
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			for _, m := range numericDate.FindAllStringSubmatch(l, -1) {
				if m[2] != m[4] {
					continue
				}
				a, _ := strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[3])
				if a < 1 || b < 1 || a > 31 || b > 31 || (a > 12 && b > 12) {
					continue
				}
				seps[m[2]]++
				years[len(m[5])]++
				ex := m[1] + m[2] + m[3] + m[4] + m[5]
				switch {
				case a > 12:
					dayFirst++
					dayEx = ex
				case b > 12:
					monthFirst++
					monthEx = ex
				}
			}
			iso += len(isoDateRe.FindAllString(l, -1))
		}
	}
	dc := dateConv{}
	if len(seps) == 0 {
		if iso > 0 {
			dc.Format, dc.Sep, dc.Year = "%Y-%m-%d", "-", 4
			dc.Why = fmt.Sprintf("%d ISO dates (YYYY-MM-DD)", iso)
		} else {
			dc.Why = "no numeric date in the samples; textual dates are read without a format"
		}
		return dc
	}
	dc.Sep = maxKey(seps)
	dc.Year = 4
	if years[2] > years[4] {
		dc.Year = 2
	}
	first := true
	switch {
	case dayFirst > 0 && dayFirst >= monthFirst:
		dc.Why = fmt.Sprintf("day first: %s cannot be month first (%d such dates)", dayEx, dayFirst)
	case monthFirst > 0:
		first = false
		dc.Why = fmt.Sprintf("month first: %s cannot be day first (%d such dates)", monthEx, monthFirst)
	case dc.Sep == ".":
		dc.Why = "every date is ambiguous (day and month ≤ 12); day first: dates with dots are written day first"
	case dc.Sep == "/" && nc.Decimal == "." && dollar:
		first = false
		dc.Why = "every date is ambiguous (day and month ≤ 12); month first assumed: '/' dates with a decimal point and dollar amounts are US dates — check this"
	default:
		dc.Why = "every date is ambiguous (day and month ≤ 12); day first assumed (the usual order outside the US) — check this"
	}
	y := "%Y"
	if dc.Year == 2 {
		y = "%y"
	}
	if first {
		dc.Format = "%d" + dc.Sep + "%m" + dc.Sep + y
	} else {
		dc.Format = "%m" + dc.Sep + "%d" + dc.Sep + y
	}
	return dc
}

// dateRe is the pattern of one date in this convention; textual and ISO
// dates are matched too so a buyer switching format is still read.
func (dc dateConv) dateRe() string {
	if dc.Pattern != "" {
		return dc.Pattern
	}
	if dc.Format == "%Y-%m-%d" {
		return `\d{4}-\d{2}-\d{2}`
	}
	if dc.Sep == "" {
		return textDateRe
	}
	y := `\d{4}`
	if dc.Year == 2 {
		y = `\d{2}`
	}
	s := regexp.QuoteMeta(dc.Sep)
	return `\d{1,2}` + s + `\d{1,2}` + s + y
}

// textDateRe matches dates with a month name: 7. Mai 2024, 7 May 2024,
// 1er juillet 2024, May 7, 2024, 30-Jun-2024.
const textDateRe = `(?:\d{1,2}(?:er)?\.?[ \t]+[^\W\d_]{3,}\.?[ \t]+\d{4}|[^\W\d_]{3,}\.?[ \t]+\d{1,2},?[ \t]+\d{4}|\d{1,2}-[^\W\d_]{3,}-(?:\d{4}|\d{2}))`

func maxKey(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys[0]
}
