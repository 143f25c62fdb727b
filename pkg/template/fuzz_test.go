package template_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/template"
)

// FuzzExtract runs arbitrary templates on arbitrary text: no panic, the
// invoice2data JSON is valid JSON, and Order returns an outcome or an error.
func FuzzExtract(f *testing.F) {
	f.Add(acmeTemplate, acmeText)
	f.Add("keywords: [a]\nfields:\n  amount: 'x(\\d+)'\n  date: 'd (\\S+)'\n", "a x12 d 2024-01-02")
	f.Add("keywords: ['(?i)x']\nlines:\n  start: s\n  end: e\n  first_line: '(?P<a>\\d)'\n  line: '(?P<b>\\w+)'\n  last_line: '(?P<c>z)'\n", "X s\n1\nfoo\nz\ne")
	f.Add("keywords: [t]\ntables:\n  - {start: S, end: E, body: '(?P<amount_x>[\\d,.]+) (?P<date_y>\\S+)'}\noptions: {decimal_separator: ','}\n", "t S\n1,5 01.02.2020\n2 3/4/2020\nE")
	f.Fuzz(func(t *testing.T, yml, text string) {
		tpl, err := template.Parse("fuzz.yml", []byte(yml))
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := tpl.Extract(ctx, text, &template.ExtractOptions{Trace: &template.Trace{}})
		if err != nil {
			return
		}
		b, err := template.MarshalInvoice2dataJSON([]*template.Result{res})
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
		_, out, err := tpl.Order(ctx, res, nil, document.ResultMode(""), nil)
		if err == nil && out == nil {
			t.Fatal("Order returned neither outcome nor error")
		}
	})
}

// FuzzParseNumber checks ParseNumber against strconv for plain decimals and
// that the exact decimal agrees with the float.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"1.234,56", "1,234.56", "-3,5", "0", "1e3", "12 345", "'", "..", "+.5"} {
		f.Add(s, ",")
		f.Add(s, ".")
	}
	f.Fuzz(func(t *testing.T, s, sep string) {
		if sep != "," && sep != "." {
			return
		}
		n, err := template.ParseNumber(s, sep)
		if err != nil {
			return
		}
		if n.Dec != "" {
			g, err := strconv.ParseFloat(n.Dec, 64)
			if err != nil || g != n.F {
				t.Fatalf("%q: Dec %q does not agree with %v", s, n.Dec, n.F)
			}
		}
		// Oracle: digits with at most one decimal separator parse like strconv.
		if strings.Trim(s, "0123456789") == "" && s != "" {
			want, _ := strconv.ParseFloat(s, 64)
			if want != n.F {
				t.Fatalf("%q: got %v, want %v", s, n.F, want)
			}
		}
	})
}

// FuzzParseAmount: an accepted amount is a canonical decimal whose value
// ParseNumber (invoice2data's lax reading) agrees with; strictness only ever
// rejects, never reinterprets.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1.234,56", "1,234.56", "-3,5", "12,34,567.00", "1'234.50", "2.256,19", "1,5", "12,50-", "1 234"} {
		f.Add(s, ",")
		f.Add(s, ".")
	}
	f.Fuzz(func(t *testing.T, s, sep string) {
		if sep != "," && sep != "." {
			return
		}
		d, err := template.ParseAmount(s, sep)
		if err != nil {
			return
		}
		if _, err := strconv.ParseFloat(d, 64); err != nil || strings.ContainsAny(d, ",' ") {
			t.Fatalf("%q: %q is not a canonical decimal", s, d)
		}
		if strings.HasSuffix(strings.TrimSpace(s), "-") {
			return // a trailing minus is ParseAmount's own extension
		}
		n, err := template.ParseNumber(strings.TrimSpace(s), sep)
		if err == nil && n.Dec != "" {
			a, _ := strconv.ParseFloat(d, 64)
			b, _ := strconv.ParseFloat(n.Dec, 64)
			if a != b {
				t.Fatalf("%q with %q: ParseAmount %s, ParseNumber %s", s, sep, d, n.Dec)
			}
		}
	})
}

// FuzzParseDate: no panic; a parsed date is a real date that parses back
// from its ISO form.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2024-05-07", "7. Mai 2014", "31/12/2024", "03/04/2024", "August 3 , 2014", "1er juillet 2015"} {
		f.Add(s, "")
		f.Add(s, "%d/%m/%Y")
	}
	f.Fuzz(func(t *testing.T, s, format string) {
		var formats []string
		if format != "" {
			formats = []string{format}
		}
		d, err := template.ParseDate(s, formats, nil)
		if err != nil {
			return
		}
		back, err := template.ParseDate(d.String(), nil, nil)
		if err != nil || back != d {
			t.Fatalf("%q → %v does not round-trip (%v, %v)", s, d, back, err)
		}
	})
}
