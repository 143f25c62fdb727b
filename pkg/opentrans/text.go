package opentrans

import (
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"
)

// clean makes s safe to write as XML 1.0 character data and trims it.
//
// Choice: characters XML 1.0 forbids (C0 controls other than tab, LF and CR,
// U+FFFE, U+FFFF) are removed: in text extracted from PDFs they are layout
// artefacts (form feeds, U+0002 hyphens, NULs), not content. Bytes that are
// not valid UTF-8 become U+FFFD: a character stood there, but we cannot know
// which. Leading and trailing white space is never meaningful in openTRANS
// values; the reader trims the same way, so writer and reader agree.
func clean(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !isXMLChar(r) }) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case isXMLChar(r):
			b.WriteRune(r)
		}
		i += size
	}
	return strings.TrimSpace(b.String())
}

// isXMLChar reports whether r is a Char of the XML 1.0 grammar.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// truncate cuts s to at most n characters (XSD lengths count characters, not
// bytes) and reports whether it did.
func truncate(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], true
}

// limit truncates s to n characters and trims what the cut exposed, so that
// the reader (which trims) gets back exactly what was written.
func limit(s string, n int) string {
	t, _ := truncate(s, n)
	return strings.TrimSpace(t)
}

// cleanToken keeps the ASCII letters and digits of an attribute value such as
// a party id type, so that it matches the schema's `\w{1,250}` alternative
// in every XSD processor (XSD's \w excludes '_' and '-'); the schema's own
// enumerated values ("buyer_specific", ...) pass unchanged.
func cleanToken(s string, known ...string) string {
	s = strings.TrimSpace(s)
	for _, k := range known {
		if s == k {
			return s
		}
	}
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	out, _ := truncate(b.String(), 250)
	return out
}

var canonicalDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// maxDecimalDigits is libxml2's limit for xsd:decimal values (leading zeros
// of the integer part not counted): xmllint rejects a 25th digit although the
// XSD sets no limit. No printed amount comes close.
const maxDecimalDigits = 24

// checkDecimal reports whether s is a decimal in the model's canonical form
// that every XSD processor we validate with accepts.
func checkDecimal(s string) bool {
	if !canonicalDecimal.MatchString(s) {
		return false
	}
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	intPart = strings.TrimLeft(intPart, "0")
	return len(intPart)+len(frac) <= maxDecimalDigits
}

// shiftDecimal multiplies the canonical decimal s by 10^n by moving the
// decimal point, so that a tax percentage ("19") and the factor openTRANS
// wants in TAX ("0.19") convert exactly and back again.
func shiftDecimal(s string, n int) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := intPart + frac
	point := len(intPart) + n
	if point < 1 {
		digits = strings.Repeat("0", 1-point) + digits
		point = 1
	}
	if point > len(digits) {
		digits += strings.Repeat("0", point-len(digits))
	}
	intPart, frac = strings.TrimLeft(digits[:point], "0"), digits[point:]
	if intPart == "" {
		intPart = "0"
	}
	if frac != "" {
		return sign + intPart + "." + frac
	}
	return sign + intPart
}

// addDecimals sums canonical decimals exactly; the result has as many
// decimals as the longest input.
func addDecimals(vals ...string) string {
	sum := new(big.Rat)
	scale := 0
	for _, v := range vals {
		r, ok := new(big.Rat).SetString(v)
		if !ok {
			continue
		}
		sum.Add(sum, r)
		if _, frac, ok := strings.Cut(v, "."); ok && len(frac) > scale {
			scale = len(frac)
		}
	}
	return sum.FloatString(scale)
}
