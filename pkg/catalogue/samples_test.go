package catalogue_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/template"
	"github.com/stretchr/testify/require"
)

const tplYAML = `issuer: Acme
keywords: [ACME ORDER]
exclude_keywords: ['(?i)\binvoice\b']
fields:
  order_id:
    parser: regex
    regex: 'PO (\d+)'
  amount:
    parser: regex
    regex: 'Total (\d+\.\d\d)'
    type: float
docintake:
  name: acme
  required: [order_id]
  # The samples print no date; the receipt dates them, so refused.txt is
  # refused for its missing items alone.
  date_fallback: receipt
  rules:
    - match: '(?i)\binvoice\b'
      action: reject
`

func txt(ctx context.Context, name string, b []byte) (string, error) { return string(b), nil }

func TestRun(t *testing.T) {
	t.Parallel()
	tpl, err := template.Parse("acme.yml", []byte(tplYAML))
	require.NoError(t, err)
	require.Empty(t, tpl.Problems)
	order := "ACME ORDER\nPO 4711\nTotal 12.50\n"
	files := []catalogue.SampleFile{
		{Name: "good.txt", Content: []byte(order)},
		// 12.5 as the float invoice2data writes; 1 and 1.0 would differ.
		{Name: "good.json", Content: []byte(`[{"issuer": "Acme", "order_id": "4711", "amount": 12.5, "desc": "Invoice from Acme", "currency": "EUR", "template_name": "whatever"}]`)},
		{Name: "wrong.txt", Content: []byte(order)},
		{Name: "wrong.json", Content: []byte(`[{"issuer": "Acme", "order_id": "4712", "amount": 12.5, "currency": "EUR", "extra": 1}]`)},
		{Name: "invoice.txt", Content: []byte("ACME ORDER\nINVOICE\nPO 1\n")},
		{Name: "invoice.json", Content: []byte(`{"status": "rejected", "status_reason": "not_an_order"}`)},
		// An order without items is refused for another reason.
		{Name: "refused.txt", Content: []byte(order)},
		{Name: "refused.json", Content: []byte(`{"status": "rejected", "status_reason": "not_an_order"}`)},
		{Name: "lonely.json", Content: []byte(`[]`)},
		{Name: "orphan.txt", Content: []byte(order)},
		{Name: "README.md", Content: []byte("notes")},
	}
	res, err := catalogue.CheckSamples(t.Context(), tpl, files, txt)
	require.NoError(t, err)
	got := map[string]catalogue.SampleResult{}
	for _, r := range res {
		got[r.Name] = r
	}
	require.Len(t, got, 6)
	require.True(t, got["good.txt"].Pass, got["good.txt"].Line())
	require.True(t, got["invoice.txt"].Pass, got["invoice.txt"].Line())
	require.Equal(t, []string{`desc: not expected, got "Invoice from Acme"`, "extra: missing", `order_id: want "4712" got "4711"`}, got["wrong.txt"].Problems)
	require.Equal(t, []string{"status_reason: want not_an_order got cannot_parse_items",
		"detail: no line items (field lines)"}, got["refused.txt"].Problems)
	require.False(t, got["lonely.json"].Pass)
	require.Contains(t, got["lonely.json"].Line(), "no lonely.pdf or lonely.txt")
	require.False(t, got["orphan.txt"].Pass)
	require.Equal(t, 4, catalogue.FailedSamples(res))
}

// TestShippedTemplates runs the samples of deploy/templates. The expected
// results (NAME.samples/X.json) are committed; the documents are the shared
// corpus's (never copied into the repository), so the test assembles each
// template with its samples in a temporary directory, linking X.pdf from
// ../shared/corpus, and runs them as `intakectl templates test` would.
func TestShippedTemplates(t *testing.T) {
	t.Parallel()
	corpus := repotest.Shared(t, "corpus")
	deploy := filepath.Join(repotest.Root(t), "deploy", "templates")
	docs := map[string]string{}
	require.NoError(t, filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".pdf") {
			docs[strings.TrimSuffix(d.Name(), filepath.Ext(d.Name()))] = p
		}
		return err
	}))
	files, err := filepath.Glob(filepath.Join(deploy, "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	eng, err := pdftext.New(pdftext.DefaultOptions())
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close() })
	text := func(ctx context.Context, _ string, b []byte) (string, error) {
		tx, err := eng.Extract(ctx, b)
		if err != nil {
			return "", err
		}
		return tx.String(), nil
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tf := filepath.Join(dir, filepath.Base(f))
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(tf, data, 0o600))
			expected, err := filepath.Glob(filepath.Join(catalogue.SamplesDir(f), "*.json"))
			require.NoError(t, err)
			require.NotEmpty(t, expected, "every shipped template has samples")
			sd := catalogue.SamplesDir(tf)
			require.NoError(t, os.Mkdir(sd, 0o750))
			for _, e := range expected {
				base := strings.TrimSuffix(filepath.Base(e), ".json")
				doc, ok := docs[base]
				require.True(t, ok, "%s: no %s.pdf in the corpus", e, base)
				require.NoError(t, os.Symlink(e, filepath.Join(sd, base+".json")))
				require.NoError(t, os.Symlink(doc, filepath.Join(sd, base+".pdf")))
			}
			p, err := catalogue.ReadTemplateFile(tf)
			require.NoError(t, err)
			res, err := catalogue.RunSamples(t.Context(), p, text)
			require.NoError(t, err)
			require.Len(t, res, len(expected))
			for _, r := range res {
				require.True(t, r.Pass, r.Line())
			}
		})
	}
}
