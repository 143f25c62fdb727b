package pogen

import (
	"strconv"
	"strings"
	"time"
)

// A date layout is written with the tokens YYYY YY MM M DD D Month Mon MON;
// everything else is literal. Month names come from the document's language,
// which Go's time layouts cannot do.
var dateTokens = []string{"YYYY", "Month", "MON", "Mon", "DD", "MM", "YY", "D", "M"}

// formatDate renders t in layout with v's month names.
func formatDate(layout string, t time.Time, v *vocab) string {
	var b strings.Builder
	for i := 0; i < len(layout); {
		tok := ""
		for _, k := range dateTokens {
			if strings.HasPrefix(layout[i:], k) {
				tok = k
				break
			}
		}
		if tok == "" {
			b.WriteByte(layout[i])
			i++
			continue
		}
		b.WriteString(dateToken(tok, t, v))
		i += len(tok)
	}
	return b.String()
}

func dateToken(tok string, t time.Time, v *vocab) string {
	two := func(n int) string {
		if n < 10 {
			return "0" + strconv.Itoa(n)
		}
		return strconv.Itoa(n)
	}
	switch tok {
	case "YYYY":
		return strconv.Itoa(t.Year())
	case "YY":
		return two(t.Year() % 100)
	case "MM":
		return two(int(t.Month()))
	case "M":
		return strconv.Itoa(int(t.Month()))
	case "DD":
		return two(t.Day())
	case "D":
		return strconv.Itoa(t.Day())
	case "Month":
		return v.months[t.Month()-1]
	case "Mon":
		return v.monthsAbbr[t.Month()-1]
	}
	return strings.ToUpper(v.monthsAbbr[t.Month()-1]) // MON
}

// dateOrder tells which of day and month comes first in a layout ("dmy",
// "mdy" or "ymd"). All dates of one document share it, as on real POs.
func dateOrder(layout string) string {
	d := strings.Index(layout, "D")
	m := strings.Index(layout, "M")
	y := strings.Index(layout, "Y")
	switch {
	case y < d && y < m:
		return "ymd"
	case m < d:
		return "mdy"
	}
	return "dmy"
}

// dateFeatures names what a layout exercises.
func dateFeatures(layout string) []string {
	f := []string{"date_" + dateOrder(layout)}
	if strings.Contains(layout, "Mon") || strings.Contains(layout, "MON") {
		f = append(f, "month_names")
	}
	if strings.Contains(layout, "YY") && !strings.Contains(layout, "YYYY") {
		f = append(f, "two_digit_year")
	}
	return f
}
