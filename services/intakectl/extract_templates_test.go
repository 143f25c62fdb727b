package intakectl_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// By default extract loads a folder as invoice2data does: a file that does
// not load is a warning naming the file and why, and the others are read;
// what invoice2data runs past (a key it ignores) loads with a warning.
func TestExtractSkipsBrokenTemplates(t *testing.T) {
	t.Parallel()
	broken := strings.Replace(testTemplate, `regex: 'Order number:\s+(\S+)'`, `regex: 'Order number:\s+(\S+'`, 1)
	// The same layout under another name and party id, with a key
	// invoice2data ignores (priority written under options).
	other := strings.NewReplacer("name: northwind", "name: northwind-b", "party_ids: [NORTHWIND]", "party_ids: [NORTHWIND-B]",
		`currency: EUR`, "currency: EUR\n  priority: 10").Replace(testTemplate)
	dir := fixture(t, map[string][]byte{"templates/a.yml": []byte(broken), "templates/b.yml": []byte(other), "order.pdf": orderPDF()})
	tmpl, pdf := filepath.Join(dir, "templates"), filepath.Join(dir, "order.pdf")

	r := run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND-B", "--output", "xml", pdf)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "<ORDER_ID>NW-2026-0042</ORDER_ID>")
	require.Contains(t, r.stderr, "warning: "+filepath.Join(tmpl, "a.yml")+": skipped, it does not load: "+filepath.Join(tmpl, "a.yml")+":8: fields.order_id.regex")
	require.Contains(t, r.stderr, "warning: "+filepath.Join(tmpl, "b.yml")+":44: options.priority: unknown option (loaded anyway, as invoice2data does)")
	// The skipped file's party id is unknown, as if the file were absent.
	r = run(t, "extract", "--templates", tmpl, "--party-id", "NORTHWIND", "--output", "xml", pdf)
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, `no template for party_id "NORTHWIND"`)

	// A party id claimed by a second file leaves that file out; a name used
	// twice is a warning (the first file keeps it), as in --lenient.
	claim := strings.Replace(testTemplate, "name: northwind", "name: northwind-c", 1)
	dup := fixture(t, map[string][]byte{"a.yml": []byte(testTemplate), "b.yml": []byte(claim), "c.yml": []byte(other),
		"d.yml": []byte(strings.Replace(other, "[NORTHWIND-B]", "[NORTHWIND-D]", 1))})
	r = run(t, "extract", "--templates", dup, "--template", "northwind-b", "--output", "xml", pdf)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "warning: "+filepath.Join(dup, "b.yml")+`: skipped, it does not load: template: party_id "NORTHWIND" is also claimed by `+filepath.Join(dup, "a.yml")+":48: docintake.party_ids")
	require.Contains(t, r.stderr, `warning: template: duplicate name "northwind-b" in `+filepath.Join(dup, "c.yml"))
	r = run(t, "extract", "--templates", dup, "--template", "northwind-c", "--output", "xml", pdf)
	require.Equal(t, 2, r.code, r.stderr)
}

// invoice2data's golden documents, read by extract over invoice2data's
// whole template folder (215 files, 2 of which do not load and 14 of which
// carry problems invoice2data runs past) plus the custom templates of its
// test, as its golden test reads them. The expected outputs are
// invoice2data's own .json files, compared as invoice2data's test compares
// (the whole list as JSON values, template_name dropped).
func TestExtractInvoice2dataFolder(t *testing.T) {
	t.Parallel()
	root := sharedDir(t, "corpus", "invoice2data")
	builtin, custom := filepath.Join(root, "templates"), filepath.Join(root, "tests", "custom", "templates")
	var cases []string
	for _, pattern := range []string{"tests/compare/*.pdf", "tests/compare/*.txt", "tests/custom/*.txt"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		for _, f := range m {
			if _, err := os.Stat(strings.TrimSuffix(f, filepath.Ext(f)) + ".json"); err == nil && !strings.HasPrefix(filepath.Base(f), "saeco") {
				cases = append(cases, f)
			}
		}
	}
	require.Len(t, cases, 16, "invoice2data's golden cases (PROVENANCE.md)")
	equal := map[string]bool{}
	for _, f := range cases {
		r := run(t, "extract", "--templates", builtin, "--templates", custom, "--output", "json", f)
		want, err := os.ReadFile(strings.TrimSuffix(f, filepath.Ext(f)) + ".json")
		require.NoError(t, err)
		equal[filepath.Base(f)] = sameInvoice2dataJSON(t, want, []byte(r.stdout))
		if !equal[filepath.Base(f)] {
			t.Logf("%s differs (exit %d):\n%s", filepath.Base(f), r.code, r.stdout)
		}
		// Every file that does not load is named with why; the run goes on.
		require.Contains(t, r.stderr, "warning: "+filepath.Join(builtin, "nl", "nl.gulf.yml")+": skipped, it does not load: ")
		require.Contains(t, r.stderr, "warning: "+filepath.Join(builtin, "nl", "nl.blokker.yml")+": skipped, it does not load: ")
	}
	n := 0
	for _, ok := range equal {
		if ok {
			n++
		}
	}
	// 15 of 16: AzureInterior.pdf carries its invoice as an attached UBL
	// document, which extract reads instead of the printed text (README,
	// "Orders that carry their own data"), and an order template rejects
	// an invoice; invoice2data reads the text.
	require.False(t, equal["AzureInterior.pdf"])
	require.Equal(t, 15, n, "golden documents read as invoice2data reads them: %v", equal)
}

// sameInvoice2dataJSON compares two invoice2data outputs as its golden test
// does: JSON values (1 and 1.0 differ), template_name dropped.
func sameInvoice2dataJSON(t *testing.T, want, got []byte) bool {
	t.Helper()
	decode := func(b []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return nil, false
		}
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if m, ok := e.(map[string]any); ok {
					delete(m, "template_name")
				}
			}
		}
		return v, true
	}
	w, ok := decode(want)
	require.True(t, ok, "expected JSON does not decode")
	g, ok := decode(got)
	return ok && reflect.DeepEqual(w, g)
}
