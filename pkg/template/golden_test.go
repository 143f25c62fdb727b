package template_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// goldenCases lists invoice2data's golden test inputs: every .pdf/.txt with a
// .json of the same name in tests/compare and tests/custom, except saeco*
// and camelot*.
func goldenCases(t testing.TB, root string) []string {
	t.Helper()
	var cases []string
	for _, dir := range []string{"tests/compare", "tests/custom"} {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		require.NoError(t, err)
		for _, e := range ents {
			name := e.Name()
			ext := filepath.Ext(name)
			if ext != ".pdf" && ext != ".txt" {
				continue
			}
			if strings.HasPrefix(name, "saeco") || strings.HasPrefix(name, "camelot") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, dir, strings.TrimSuffix(name, ext)+".json")); err != nil {
				continue
			}
			cases = append(cases, filepath.Join(root, dir, name))
		}
	}
	return cases
}

var (
	goldenSetOnce sync.Once
	goldenSet     *template.Set
	goldenSetErr  error
)

// loadGoldenSet loads invoice2data's test templates plus its built-in ones
// (once per test binary: 220 templates take a while under -race).
func loadGoldenSet(t testing.TB, root string) *template.Set {
	t.Helper()
	goldenSetOnce.Do(func() {
		goldenSet, goldenSetErr = template.LoadWith(template.LoadOptions{Lenient: true},
			filepath.Join(root, "tests/custom/templates"), filepath.Join(root, "templates"))
	})
	require.NoError(t, goldenSetErr)
	return goldenSet
}

// TestInvoice2dataGolden runs invoice2data's own golden test: the JSON output
// must equal the expected file after dropping template_name.
func TestInvoice2dataGolden(t *testing.T) {
	t.Parallel()
	root := filepath.Join(templatetest.SharedDir(t), "corpus", "invoice2data")
	set := loadGoldenSet(t, root)
	cases := goldenCases(t, root)
	require.Len(t, cases, 16)
	for _, path := range cases {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			text := templatetest.PDFText(t, path)
			tpl, tried := set.Match(text)
			require.NotNil(t, tpl, "no template matched; tried %d", len(tried))
			res, err := tpl.Extract(t.Context(), text, &template.ExtractOptions{Area: templatetest.AreaFunc(path)})
			require.NoError(t, err)
			got, err := template.MarshalInvoice2dataJSON([]*template.Result{res})
			require.NoError(t, err)
			want, err := os.ReadFile(strings.TrimSuffix(path, filepath.Ext(path)) + ".json")
			require.NoError(t, err)
			requireSameJSON(t, want, got, tpl.Name, res)
			if filepath.Base(path) == "NetpresseInvoice.pdf" {
				// The crop is what makes this case pass: on the whole
				// page the date field finds other dates.
				whole, err := tpl.Extract(t.Context(), text, nil)
				require.NoError(t, err)
				got, err := template.MarshalInvoice2dataJSON([]*template.Result{whole})
				require.NoError(t, err)
				require.False(t, sameJSON(t, want, got), "NetpresseInvoice must need its area crop")
			}
		})
	}
}

// requireSameJSON compares two JSON documents as values, keeping the
// distinction between 1 and 1.0 (json.Number), after dropping template_name.
func requireSameJSON(t *testing.T, want, got []byte, name string, res *template.Result) {
	t.Helper()
	if !sameJSON(t, want, got) {
		t.Fatalf("template %s: JSON differs\nwant: %s\ngot:  %s\nerrors: %v", name, want, got, res.Errors)
	}
}

func sameJSON(t *testing.T, want, got []byte) bool {
	t.Helper()
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		require.NoError(t, d.Decode(&v))
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if m, ok := e.(map[string]any); ok {
					delete(m, "template_name")
				}
			}
		}
		return v
	}
	return reflect.DeepEqual(decode(want), decode(got))
}

// TestInvoice2dataGoldenPdfium runs the golden cases on the pure-Go pdfium
// engine's text and reports how many match; the expected files were made
// with pdftotext, so layout differences are reported, not failed.
func TestInvoice2dataGoldenPdfium(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("pdfium golden comparison (a report) skipped with -short and -race")
	}
	t.Parallel()
	root := filepath.Join(templatetest.SharedDir(t), "corpus", "invoice2data")
	set := loadGoldenSet(t, root)
	eng, err := pdftext.New(pdftext.Options{Engine: pdftext.EnginePdfium, Workers: 1})
	require.NoError(t, err)
	defer eng.Close()
	matched, pdfs, texts := 0, 0, 0
	for _, path := range goldenCases(t, root) {
		if filepath.Ext(path) != ".pdf" {
			texts++
			continue
		}
		pdfs++
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		txt, err := eng.Extract(t.Context(), data)
		require.NoError(t, err)
		got := []byte("null")
		tpl, _ := set.Match(txt.String())
		if tpl != nil {
			res, err := tpl.Extract(t.Context(), txt.String(), nil)
			require.NoError(t, err)
			got, err = template.MarshalInvoice2dataJSON([]*template.Result{res})
			require.NoError(t, err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(path, ".pdf") + ".json")
		require.NoError(t, err)
		if sameJSON(t, want, got) {
			matched++
			continue
		}
		name := "(none)"
		if tpl != nil {
			name = tpl.Name
		}
		t.Logf("pdfium: %s differs (template %s):\n%s", filepath.Base(path), name, diffLines(want, got))
	}
	t.Logf("pdfium engine: %d of %d golden PDFs match (the %d .txt cases need no PDF engine)", matched, pdfs, texts)
}

func diffLines(want, got []byte) string {
	w := strings.Split(string(want), "\n")
	g := map[string]bool{}
	for _, l := range strings.Split(string(got), "\n") {
		g[strings.TrimSpace(strings.TrimSuffix(l, ","))] = true
	}
	var out []string
	for _, l := range w {
		if !g[strings.TrimSpace(strings.TrimSuffix(l, ","))] {
			out = append(out, "  missing/different: "+strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "\n")
}
