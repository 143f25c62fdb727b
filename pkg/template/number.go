package template

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docintake/docintake/pkg/order"
)

// ParseNumber parses an amount as invoice2data does: decimalSep ("." or ",",
// default ".") may occur at most once; every other '.', ',', '\” and
// whitespace is a thousands separator and is dropped. "1.234,56" with "," →
// 1234.56; "1,234.56" with "." → 1234.56. The result carries the exact
// decimal (Dec) next to the float.
func ParseNumber(s, decimalSep string) (Float, error) {
	if decimalSep == "" {
		decimalSep = "."
	}
	if strings.Count(s, decimalSep) > 1 {
		return Float{}, fmt.Errorf("number %q: decimal separator %q occurs more than once", s, decimalSep)
	}
	s = strings.Replace(s, decimalSep, "|", 1)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '.' || r == ',' || r == '\'' || unicode.IsSpace(r):
		case r == '|':
			b.WriteByte('.')
		default:
			b.WriteRune(r)
		}
	}
	clean := b.String()
	dec, ok := order.CanonicalDecimal(clean)
	if ok {
		f, err := strconv.ParseFloat(dec, 64)
		if err != nil {
			return Float{}, fmt.Errorf("number %q: %w", s, err)
		}
		return Float{F: f, Dec: dec}, nil
	}
	// Python's float() also takes exponents, inf/nan and digit underscores.
	f, err := strconv.ParseFloat(strings.ReplaceAll(clean, "_", ""), 64)
	if err != nil || strings.HasPrefix(clean, "_") || strings.HasSuffix(clean, "_") || strings.Contains(clean, "__") ||
		strings.HasPrefix(strings.ToLower(strings.TrimLeft(clean, "+-")), "0x") {
		return Float{}, fmt.Errorf("number %q is not a number", strings.ReplaceAll(s, "|", decimalSep))
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return Float{F: f}, nil
	}
	return Float{F: f, Dec: strconv.FormatFloat(f, 'f', -1, 64)}, nil
}

// format fills a field's or block's value format from the template
// options where it sets nothing itself.
func (t *Template) format(own ValueFormat) ValueFormat {
	if own.DateFormats == nil {
		own.DateFormats = t.Options.DateFormats
	}
	if own.DecimalSeparator == "" {
		own.DecimalSeparator = t.Options.DecimalSeparator
	}
	return own
}

// coerce converts a matched string to a template type: "int", "float" or
// "date" (invoice2data's coerce_type) with the field's or block's format.
// Blank strings give 0 / 0.0 in invoice2data's output; the canonical order
// reads the source text instead and treats them as missing.
func (t *Template) coerce(field, v, typ string, vf ValueFormat) (any, error) {
	vf = t.format(vf)
	switch typ {
	case "int":
		if strings.TrimSpace(v) == "" {
			return int64(0), nil
		}
		f, err := ParseNumber(v, vf.DecimalSeparator)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		if math.IsInf(f.F, 0) || math.IsNaN(f.F) || math.Abs(f.F) >= 9.2e18 {
			return nil, fmt.Errorf("field %s: %q is out of integer range", field, v)
		}
		return int64(f.F), nil
	case "float":
		if strings.TrimSpace(v) == "" {
			return Float{F: 0, Dec: "0"}, nil
		}
		f, err := ParseNumber(v, vf.DecimalSeparator)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		return f, nil
	case "date":
		d, err := ParseDate(v, vf.DateFormats, t.Options.Languages)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("field %s: unknown type %q (int, float, date)", field, typ)
}

// groupSeparators are the thousands separators ParseAmount accepts: dot,
// comma, apostrophes (Swiss), and the spaces printers use (plain, no-break,
// narrow no-break, thin).
const groupSeparators = ".,'’ \u00a0\u202f\u2009"

// ParseAmount parses a printed amount or quantity strictly for the
// canonical order: an optional sign, the integer part either without
// separators or grouped in threes (1.234.567) or in the Indian 2-2-3
// grouping (12,34,567) with one separator throughout, then optionally
// decimalSep ("." or ",") and digits. Anything else (2.256,19 under a
// decimal point, 1,5 under a decimal point, 12.34.5) is an error quoting
// the text: a number that does not fit the declared separators is never
// reinterpreted. It returns the canonical decimal ("-1234.5").
func ParseAmount(s, decimalSep string) (string, error) {
	if decimalSep == "" {
		decimalSep = "."
	}
	v := strings.TrimSpace(s)
	neg := false
	switch {
	case strings.HasPrefix(v, "-"), strings.HasPrefix(v, "+"):
		neg = v[0] == '-'
		v = strings.TrimSpace(v[1:])
	case strings.HasSuffix(v, "-"): // 12,50- as some ERPs print credits
		neg = true
		v = strings.TrimSpace(v[:len(v)-1])
	}
	intPart, frac := v, ""
	if i := strings.LastIndex(v, decimalSep); i >= 0 {
		intPart, frac = v[:i], v[i+len(decimalSep):]
		if frac == "" || !isDigits(frac) {
			return "", fmt.Errorf("%q does not fit the decimal separator %q", s, decimalSep)
		}
	}
	if intPart == "" && frac == "" {
		return "", fmt.Errorf("%q is not a number", s)
	}
	if !wellGrouped(intPart, decimalSep) {
		return "", fmt.Errorf("%q does not fit the decimal separator %q (groups of three digits, or 2-2-3, with one thousands separator)", s, decimalSep)
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, intPart)
	sign := ""
	if neg {
		sign = "-"
	}
	if frac != "" {
		digits += "." + frac
	}
	dec, ok := order.CanonicalDecimal(sign + digits)
	if !ok {
		return "", fmt.Errorf("%q is not a number", s)
	}
	return dec, nil
}

// wellGrouped reports whether an integer part is plain digits or digits
// grouped by one separator (other than the decimal separator) in threes,
// or in the Indian grouping (last group three, the others two).
func wellGrouped(s, decimalSep string) bool {
	if s == "" || isDigits(s) {
		return true
	}
	var sep rune
	var groups []string
	start := 0
	for i, r := range s {
		if r >= '0' && r <= '9' {
			continue
		}
		if !strings.ContainsRune(groupSeparators, r) || string(r) == decimalSep || (sep != 0 && r != sep) {
			return false
		}
		sep = r
		groups = append(groups, s[start:i])
		start = i + utf8.RuneLen(r)
	}
	groups = append(groups, s[start:])
	first, rest := groups[0], groups[1:]
	if len(first) == 0 || len(first) > 3 || len(rest[len(rest)-1]) != 3 {
		return false
	}
	threes, indian := true, len(first) <= 2
	for _, g := range rest {
		threes = threes && len(g) == 3
	}
	for _, g := range rest[:len(rest)-1] {
		indian = indian && len(g) == 2
	}
	return threes || indian
}
