package order

import (
	"math/big"
	"strings"
)

// CanonicalDecimal turns a decimal as written ("+0012.50", "-.5", "7.") into
// the model's canonical form ("12.50", "-0.5", "7"): no '+', no leading zeros,
// no bare dot, no negative zero. Trailing zeros of the fraction stay, because
// "2.50" is what was printed. It accepts exactly the xsd:decimal lexical space
// (digits, one optional dot, one optional sign; no spaces, exponents or
// grouping), so every reader of numbers shares one rule.
func CanonicalDecimal(s string) (string, bool) {
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

// Rat is the exact value of a canonical decimal (nil when s is empty or not
// a number), for the arithmetic checks that must not round through a float.
func Rat(s string) *big.Rat {
	if s == "" {
		return nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil
	}
	return r
}
