package template

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
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
	dec, ok := canonicalDecimal(clean)
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

// canonicalDecimal turns "+0012.50", "-.5", "7." into "12.50", "-0.5", "7".
func canonicalDecimal(s string) (string, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return "", false
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return "", false
			}
		}
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return out, true
}

// coerce converts a matched string to a template type: "int", "float" or
// "date" (invoice2data's coerce_type). Blank strings give 0 / 0.0.
func (t *Template) coerce(field, v, typ string) (any, error) {
	switch typ {
	case "int":
		if strings.TrimSpace(v) == "" {
			return int64(0), nil
		}
		f, err := ParseNumber(v, t.Options.DecimalSeparator)
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
		f, err := ParseNumber(v, t.Options.DecimalSeparator)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		return f, nil
	case "date":
		d, err := ParseDate(v, t.Options.DateFormats, t.Options.Languages)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("field %s: unknown type %q (int, float, date)", field, typ)
}
