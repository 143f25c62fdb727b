package pogen

import (
	"bytes"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// truths generates seeds 1..1000 once for the tests that only read truth.
var truths = sync.OnceValues(func() ([]Truth, error) {
	out := make([]Truth, 0, 1000)
	for seed := int64(1); seed <= 1000; seed++ {
		_, t, err := Generate(seed)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
})

func allTruths(t *testing.T) []Truth {
	t.Helper()
	ts, err := truths()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestDeterministic(t *testing.T) {
	for seed := int64(1); seed <= 25; seed++ {
		pdf1, t1, err := Generate(seed)
		if err != nil {
			t.Fatal(err)
		}
		pdf2, t2, err := Generate(seed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pdf1, pdf2) {
			t.Errorf("seed %d: PDF bytes differ between runs", seed)
		}
		if !reflect.DeepEqual(t1, t2) {
			t.Errorf("seed %d: truth differs between runs", seed)
		}
	}
	_, a, _ := Generate(1)
	_, b, _ := Generate(2)
	if reflect.DeepEqual(a, b) {
		t.Error("seeds 1 and 2 gave the same truth")
	}
}

var (
	canonRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	isoRe   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// rat parses a canonical decimal; "" is zero.
func rat(t *testing.T, field, s string) *big.Rat {
	t.Helper()
	if s == "" {
		return new(big.Rat)
	}
	if !canonRe.MatchString(s) {
		t.Fatalf("%s %q is not a canonical decimal", field, s)
	}
	r, _ := new(big.Rat).SetString(s)
	return r
}

// round2 rounds half away from zero to cents, independently of the
// generator's integer arithmetic.
func round2(r *big.Rat) *big.Rat {
	x := new(big.Rat).Mul(r, big.NewRat(100, 1))
	neg := x.Sign() < 0
	x.Abs(x).Add(x, big.NewRat(1, 2))
	q := new(big.Int).Quo(x.Num(), x.Denom())
	if neg {
		q.Neg(q)
	}
	return new(big.Rat).SetFrac(q, big.NewInt(100))
}

func TestTruthArithmetic(t *testing.T) {
	for _, tr := range allTruths(t)[:300] {
		t.Run(tr.File, func(t *testing.T) { checkTruth(t, tr) })
	}
}

func checkTruth(t *testing.T, tr Truth) {
	checkShape(t, tr)
	sum, qty := new(big.Rat), new(big.Rat)
	for i, it := range tr.Items {
		q := rat(t, "quantity", it.Quantity)
		qty.Add(qty, q)
		if it.UnitPrice == "" {
			continue
		}
		basis := big.NewRat(1, 1)
		if it.PriceBasis != "" {
			basis = rat(t, "price_basis", it.PriceBasis)
		}
		line := new(big.Rat).Mul(q, rat(t, "unit_price", it.UnitPrice))
		line.Quo(line, basis)
		keep := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Quo(rat(t, "discount", it.DiscountPercent), big.NewRat(100, 1)))
		line = round2(line.Mul(line, keep))
		if it.LineAmount != "" && line.Cmp(rat(t, "line_amount", it.LineAmount)) != 0 {
			t.Errorf("item %d: %s × %s / %s × (1-%s%%) = %s, printed %s", i, it.Quantity, it.UnitPrice, basis, it.DiscountPercent, line.FloatString(2), it.LineAmount)
		}
		sum.Add(sum, line)
	}
	if tr.Net != "" && sum.Cmp(rat(t, "net", tr.Net)) != 0 {
		t.Errorf("net %s, lines sum to %s", tr.Net, sum.FloatString(2))
	}
	if tr.Gross != "" {
		want := new(big.Rat).Add(sum, rat(t, "tax", tr.Tax))
		want.Add(want, rat(t, "charges", tr.Charges))
		if want.Cmp(rat(t, "gross", tr.Gross)) != 0 {
			t.Errorf("gross %s, want net+tax+charges %s", tr.Gross, want.FloatString(2))
		}
	}
	if tr.TotalQuantity != "" && qty.Cmp(rat(t, "total_quantity", tr.TotalQuantity)) != 0 {
		t.Errorf("total quantity %s, items sum to %s", tr.TotalQuantity, qty.FloatString(4))
	}
}

// checkShape checks the truth's form: kinds, dates, required fields.
func checkShape(t *testing.T, tr Truth) {
	t.Helper()
	if !slices.Contains([]string{"order", "invoice", "delivery_note", "quotation", "credit_note", "proforma"}, tr.Kind) {
		t.Errorf("kind %q", tr.Kind)
	}
	if !slices.Contains([]string{"en", "de", "fr", "nl", "es", "it"}, tr.Language) {
		t.Errorf("language %q", tr.Language)
	}
	if (tr.Kind != "order") != slices.Contains(tr.Features, "negative") {
		t.Errorf("kind %s but features %v", tr.Kind, tr.Features)
	}
	if tr.Kind == "order" && (tr.OrderID == "" || tr.DocumentNo != "") || tr.Kind != "order" && (tr.OrderID != "" || tr.DocumentNo == "") {
		t.Errorf("kind %s with order id %q, document no %q", tr.Kind, tr.OrderID, tr.DocumentNo)
	}
	for _, d := range []string{tr.OrderDate, tr.DeliveryDate} {
		if _, err := time.Parse("2006-01-02", d); d != "" && (!isoRe.MatchString(d) || err != nil) {
			t.Errorf("date %q is not YYYY-MM-DD", d)
		}
	}
	if len(tr.Items) == 0 {
		t.Error("no items")
	}
	if tr.Currency != "" && len(tr.Currency) != 3 {
		t.Errorf("currency %q", tr.Currency)
	}
}

func TestEveryFeatureOver1000Seeds(t *testing.T) {
	seen := map[string]int{}
	for _, tr := range allTruths(t) {
		for _, f := range tr.Features {
			seen[f]++
			if !slices.Contains(featureNames, f) {
				t.Errorf("%s: feature %q is not in featureNames", tr.File, f)
			}
		}
	}
	for _, f := range featureNames {
		if seen[f] == 0 {
			t.Errorf("feature %q never drawn in 1000 seeds", f)
		}
	}
	negatives := seen["negative"]
	if negatives < 50 || negatives > 120 {
		t.Errorf("%d negatives in 1000, want about 8 %%", negatives)
	}
}

// pdftotext returns the -layout text of a PDF, skipping the test when
// poppler-utils is missing (a failure under CI=true).
func pdftotext(t *testing.T, pdf []byte) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftotext (poppler-utils) is required under CI")
		}
		t.Skip("pdftotext (poppler-utils) not installed; install it or set CI=true to make this a failure")
	}
	path := filepath.Join(t.TempDir(), "po.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-layout", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// printedForms are the ways a canonical decimal can be printed under the
// conventions the generator uses.
func printedForms(canon string) []string {
	d := parseDec(strings.TrimPrefix(canon, "-"))
	if strings.HasPrefix(canon, "-") {
		d.u = -d.u
	}
	var out []string
	for _, c := range []numConv{convUS, convEU, convSpace, convSwiss, convLakh, convPlain, convPlainEU, convSpaceDot} {
		out = append(out, c.format(d))
	}
	return out
}

func TestPDFTextHasPrintedValues(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		pdf, tr, err := Generate(seed)
		if err != nil {
			t.Fatal(err)
		}
		text := pdftotext(t, pdf)
		id := tr.OrderID + tr.DocumentNo
		if !strings.Contains(text, id) {
			t.Errorf("seed %d: number %q not in the text", seed, id)
		}
		for i, it := range tr.Items {
			if it.LineAmount != "" && !containsAny(text, printedForms(it.LineAmount)) {
				t.Errorf("seed %d item %d: line amount %s not in the text", seed, i, it.LineAmount)
			}
			for _, word := range strings.Fields(it.Description) {
				if !strings.Contains(text, word) {
					t.Errorf("seed %d item %d: description word %q not in the text", seed, i, word)
				}
			}
		}
		if tr.Gross != "" && !containsAny(text, printedForms(tr.Gross)) {
			t.Errorf("seed %d: gross %s not in the text", seed, tr.Gross)
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func TestAmountWords(t *testing.T) {
	cases := []struct {
		n      int64
		indian bool
		want   string
	}{
		{1234567, true, "Twelve Lakh Thirty-Four Thousand Five Hundred Sixty-Seven"},
		{1234567, false, "One Million Two Hundred Thirty-Four Thousand Five Hundred Sixty-Seven"},
		{100, false, "One Hundred"},
		{25000000, true, "Two Crore Fifty Lakh"},
	}
	for _, c := range cases {
		if got := words(c.n, c.indian); got != c.want {
			t.Errorf("words(%d, %v) = %q, want %q", c.n, c.indian, got, c.want)
		}
	}
}

func TestNumberConventions(t *testing.T) {
	d := dec{123456789, 2}
	cases := map[numConv]string{convUS: "1,234,567.89", convEU: "1.234.567,89", convSpace: "1 234 567,89",
		convSwiss: "1'234'567.89", convLakh: "12,34,567.89", convPlain: "1234567.89"}
	for c, want := range cases {
		if got := c.format(d); got != want {
			t.Errorf("%+v: %q, want %q", c, got, want)
		}
	}
	if got := (dec{-5, 2}).canon(); got != "-0.05" {
		t.Errorf("canon(-0.05) = %q", got)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for i := range b.N {
		if _, _, err := Generate(int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
