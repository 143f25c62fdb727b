package template_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

func TestParseNumber(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, sep string
		f       float64
		dec     string
	}{
		{"1.234,56", ",", 1234.56, "1234.56"},
		{"1,234.56", ".", 1234.56, "1234.56"},
		{"1 234,56", ",", 1234.56, "1234.56"},
		{"1'234.50", ".", 1234.5, "1234.50"},
		{"42", ".", 42, "42"},
		{"-3,5", ",", -3.5, "-3.5"},
		{"0,90", ",", 0.9, "0.90"},
		{"12.345.678", ",", 12345678, "12345678"},
		{"5.", ".", 5, "5"},
		{"1e3", ".", 1000, "1000"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			n, err := template.ParseNumber(c.in, c.sep)
			require.NoError(t, err)
			require.Equal(t, c.f, n.F)
			require.Equal(t, c.dec, n.Dec)
		})
	}
	for _, bad := range []struct{ in, sep string }{{"1,2,3", ","}, {"abc", "."}, {"", "."}, {"€5", "."}} {
		_, err := template.ParseNumber(bad.in, bad.sep)
		require.Error(t, err, bad.in)
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		formats []string
		want    order.Date
	}{
		{"2024-05-07", nil, date(2024, 5, 7)},
		{"2024-05-07T10:00:00Z", nil, date(2024, 5, 7)},
		{"7. Mai 2014", nil, date(2014, 5, 7)},
		{"August 3 , 2014", nil, date(2014, 8, 3)},
		{"18 april 2014", nil, date(2014, 4, 18)},
		{"29 maart 2014", nil, date(2014, 3, 29)},
		{"1er juillet 2015", nil, date(2015, 7, 1)},
		{"3rd of March 2021", nil, date(2021, 3, 3)},
		{"Monday, 2 February 2026", nil, date(2026, 2, 2)},
		{"31/12/2024", nil, date(2024, 12, 31)},
		{"12/31/2024", nil, date(2024, 12, 31)},
		{"05.05.2024", nil, date(2024, 5, 5)},
		{"01.05.14", []string{"%d.%m.%y"}, date(2014, 5, 1)},
		{"03/04/2024", []string{"%d/%m/%Y"}, date(2024, 4, 3)},
		{"03/04/2024", []string{"%m/%d/%Y"}, date(2024, 3, 4)},
		// No format matches; the formats' day/month order decides.
		{"03.04.2024 10:00", []string{"%d.%m.%Y"}, date(2024, 4, 3)},
		{"01/08/2024", []string{"%Y-%m-%d"}, date(2024, 1, 8)},
		{"7/27/2019", []string{"%m/%d/%Y"}, date(2019, 7, 27)},
		{"15 juillet 2015", []string{"%d %B %Y"}, date(2015, 7, 15)},
		{"March 29, 2014", []string{"%B %d, %Y"}, date(2014, 3, 29)},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			t.Parallel()
			d, err := template.ParseDate(c.in, c.formats, nil)
			require.NoError(t, err)
			require.Equal(t, c.want, d)
		})
	}
	// Ambiguous without date_formats: an error, never a guess.
	_, err := template.ParseDate("03/04/2024", nil, nil)
	require.ErrorContains(t, err, "ambiguous")
	for _, bad := range []string{"", "31/02/2024", "hello 2024", "13/13/2024", "2024"} {
		_, err := template.ParseDate(bad, nil, nil)
		require.Error(t, err, bad)
	}
}

// TestAmbiguousDateNamesField: the error reaches the canonical order and
// names the field.
func TestAmbiguousDateNamesField(t *testing.T) {
	t.Parallel()
	tpl := parseTemplate(t, `
keywords: [ACME]
fields:
  order_id: {parser: regex, regex: 'Order (\d+)'}
  date: {parser: regex, regex: 'Date (\S+)', type: date}
  lines: {parser: lines, start: Items, end: End, line: '(?P<description>\w+) (?P<quantity>\d+)'}
docintake: {name: acme}
`)
	res, err := tpl.Extract(t.Context(), "ACME Order 7 Date 03/04/2024\nItems\nbolt 3\nEnd\n", nil)
	require.NoError(t, err)
	require.Contains(t, res.Errors[0], "field date")
	_, _, err = tpl.Order(t.Context(), res, nil, "", nil)
	require.ErrorContains(t, err, "field date")
	require.ErrorContains(t, err, "ambiguous")
}

func TestCompileRegex(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern, text, want string
		backtracking        bool
	}{
		{`(?P<n>\d+)`, "abc 42", "42", false},
		{`\d{,3}x`, "1234x", "234x", false},
		{`Grundgeb\w+`, "Grundgebühr", "Grundgebühr", false},
		{`end\Z`, "the end", "end", false},
		{`(?<=Total: )\d+`, "Total: 12", "12", true},
		{`(\w)\1`, "abba", "bb", true},
		{`(?P<a>x)(?P=a)`, "axxb", "xx", true},
		{`foo(?!bar)\w+`, "foobar foobaz", "foobaz", true},
		{`(?i)paypal`, "PayPal", "PayPal", false},
		{`\u00fc`, "ü", "ü", false},
		{`[\w.]+@x`, "é.a@x", "é.a@x", false},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			t.Parallel()
			re, err := template.CompileRegex(c.pattern)
			require.NoError(t, err)
			require.Equal(t, c.backtracking, re.Backtracking())
			require.Equal(t, c.want, template.FirstMatch(re, c.text))
		})
	}
	_, err := template.CompileRegex(`(unclosed`)
	require.Error(t, err)
}

func TestPyRepr(t *testing.T) {
	t.Parallel()
	for f, want := range map[float64]string{1: "1.0", 4.11: "4.11", 262.9: "262.9", 1e16: "1e+16", 0.00001: "1e-05", 11154.8: "11154.8", -0.5: "-0.5"} {
		require.Equal(t, want, template.PyRepr(f), strconv.FormatFloat(f, 'g', -1, 64))
	}
	a, b := 0.1, 0.2
	require.Equal(t, "0.30000000000000004", template.PyRepr(a+b))
}

func TestPythonWhitespace(t *testing.T) {
	t.Parallel()
	re, err := template.CompileRegex(`Total:\s+(\S+)`)
	require.NoError(t, err)
	require.Equal(t, "Total:\u00a0\u00a012", template.FirstMatch(re, "Total:\u00a0\u00a012"))
}
