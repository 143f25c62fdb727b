package pogen

import (
	"math/big"
	"strconv"
	"strings"
)

// dec is a fixed-point decimal, value = u / 10^s. Amounts are generated as
// decs so that the printed text and the truth come from the same digits and the
// arithmetic is exact (no float rounding can make a line disagree with its
// quantity and price).
type dec struct {
	u int64
	s int
}

var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// canon is the truth form: optional '-', digits, '.' and exactly s decimals.
func (d dec) canon() string {
	u := d.u
	neg := u < 0
	if neg {
		u = -u
	}
	s := strconv.FormatInt(u, 10)
	if d.s > 0 {
		if len(s) <= d.s {
			s = strings.Repeat("0", d.s-len(s)+1) + s
		}
		s = s[:len(s)-d.s] + "." + s[len(s)-d.s:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// rescale changes the number of printed decimals; only used to widen.
func (d dec) rescale(s int) dec {
	if s <= d.s {
		return d
	}
	return dec{d.u * pow10[s-d.s], s}
}

func (d dec) isZero() bool { return d.u == 0 }

// addAll sums decimals of the same scale (money, scale 2).
func addAll(ds ...dec) dec {
	out := dec{0, 2}
	for _, d := range ds {
		out.u += d.rescale(2).u
	}
	return out
}

// roundDiv divides and rounds half away from zero, the rounding of invoices.
func roundDiv(num, den *big.Int) int64 {
	q, r := new(big.Int), new(big.Int)
	q.QuoRem(num, den, r)
	r.Abs(r).Mul(r, big.NewInt(2))
	if r.Cmp(new(big.Int).Abs(den)) >= 0 {
		if num.Sign()*den.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}

// lineAmount is qty × price ÷ basis × (1 − disc/100), rounded to cents.
func lineAmount(q, p dec, basis int64, disc dec) dec {
	num := big.NewInt(q.u)
	num.Mul(num, big.NewInt(p.u))
	num.Mul(num, big.NewInt(100*pow10[disc.s]-disc.u))
	num.Mul(num, big.NewInt(100))
	den := big.NewInt(pow10[q.s])
	den.Mul(den, big.NewInt(pow10[p.s]))
	den.Mul(den, big.NewInt(basis*100*pow10[disc.s]))
	return dec{roundDiv(num, den), 2}
}

// percentOf is base × rate% rounded to cents (tax rows).
func percentOf(base, rate dec) dec {
	num := big.NewInt(base.rescale(2).u)
	num.Mul(num, big.NewInt(rate.u))
	den := big.NewInt(100 * pow10[rate.s])
	return dec{roundDiv(num, den), 2}
}

// numConv is a number convention: grouping separator, decimal point and
// whether the Indian lakh grouping (12,34,567) applies.
type numConv struct {
	group, point string
	lakh         bool
}

var (
	convUS       = numConv{",", ".", false}
	convEU       = numConv{".", ",", false}
	convSpace    = numConv{" ", ",", false}
	convSwiss    = numConv{"'", ".", false}
	convLakh     = numConv{",", ".", true}
	convPlain    = numConv{"", ".", false}
	convPlainEU  = numConv{"", ",", false}
	convSpaceDot = numConv{" ", ".", false}
)

// format prints d in the convention.
func (c numConv) format(d dec) string {
	s := d.canon()
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	intPart = groupDigits(intPart, c.group, c.lakh)
	if hasFrac {
		return sign + intPart + c.point + frac
	}
	return sign + intPart
}

// groupDigits inserts sep every three digits (lakh: the last three, then
// every two).
func groupDigits(s, sep string, lakh bool) string {
	if sep == "" || len(s) <= 3 {
		return s
	}
	parts := []string{s[len(s)-3:]}
	head := s[:len(s)-3]
	step := 3
	if lakh {
		step = 2
	}
	for len(head) > step {
		parts = append([]string{head[len(head)-step:]}, parts...)
		head = head[:len(head)-step]
	}
	parts = append([]string{head}, parts...)
	return strings.Join(parts, sep)
}

var (
	ones = []string{"", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten",
		"Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen"}
	tens = []string{"", "", "Twenty", "Thirty", "Forty", "Fifty", "Sixty", "Seventy", "Eighty", "Ninety"}
)

// below1000 spells 0 < n < 1000 in English.
func below1000(n int64) string {
	var w []string
	if n >= 100 {
		w = append(w, ones[n/100], "Hundred")
		n %= 100
	}
	switch {
	case n >= 20 && n%10 != 0:
		w = append(w, tens[n/10]+"-"+ones[n%10])
	case n >= 20:
		w = append(w, tens[n/10])
	case n > 0:
		w = append(w, ones[n])
	}
	return strings.Join(w, " ")
}

// words spells a whole number in English, in the western (million) or the
// Indian (crore, lakh) system; amount-in-words lines use one or the other.
func words(n int64, indian bool) string {
	if n == 0 {
		return "Zero"
	}
	type scale struct {
		div  int64
		name string
	}
	scales := []scale{{1e9, "Billion"}, {1e6, "Million"}, {1e3, "Thousand"}, {1, ""}}
	if indian {
		scales = []scale{{1e7, "Crore"}, {1e5, "Lakh"}, {1e3, "Thousand"}, {1, ""}}
	}
	var w []string
	for _, sc := range scales {
		if n < sc.div {
			continue
		}
		k := n / sc.div
		n %= sc.div
		part := below1000(k)
		if k >= 1000 { // crores above 999 only happen in the indian system
			part = words(k, indian)
		}
		w = append(w, strings.TrimSpace(part+" "+sc.name))
	}
	return strings.Join(w, " ")
}
