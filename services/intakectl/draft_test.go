package intakectl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTemplatesDraft drafts a template from the generated Northwind order
// (label: value header, a positioned item table with decimal commas) and
// checks the files it writes, that `templates check` accepts the result and
// that `extract` with the draft reads the values printed on the order.
func TestTemplatesDraft(t *testing.T) {
	t.Parallel()
	dir := fixture(t, map[string][]byte{"order.pdf": orderPDF()})
	out := filepath.Join(dir, "templates", "northwind.yml")
	r := run(t, "templates", "draft", "--name", "northwind", "--party-id", "NW", "--out", out, filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, `order_id        found   label "Order number:", value same line (generic reader): "NW-2026-0042"`)
	require.Contains(t, r.stderr, `read back: order.pdf as the generic reader read it`)
	require.Contains(t, r.stderr, `dates: %d.%m.%Y`)
	require.Contains(t, r.stderr, `numbers: decimal separator ","`)
	require.Contains(t, r.stderr, `order.pdf: success, 2 items`)

	require.FileExists(t, filepath.Join(dir, "templates", "northwind.samples", "order.pdf"))
	js, err := os.ReadFile(filepath.Join(dir, "templates", "northwind.samples", "order.json"))
	require.NoError(t, err)
	var got []map[string]any
	require.NoError(t, json.Unmarshal(js, &got))
	require.Len(t, got, 1)
	require.Equal(t, "NW-2026-0042", got[0]["order_id"])
	require.Equal(t, "2026-11-03", got[0]["date"])

	r = run(t, "templates", "check", filepath.Join(dir, "templates"))
	require.Equal(t, 0, r.code, r.stdout)
	require.Contains(t, r.stdout, "1 templates, 1 ok")

	r = run(t, "extract", "--templates", filepath.Join(dir, "templates"), "--party-id", "NW", "--output", "json", filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, string(js), r.stdout)

	// A second draft does not overwrite the first without --force.
	r = run(t, "templates", "draft", "--out", out, filepath.Join(dir, "order.pdf"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "exists (--force overwrites it)")
	r = run(t, "templates", "draft", "--force", "--name", "northwind", "--party-id", "NW", "--out", out, filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)

	// --out a directory: NAME.yml in it; without --name the name comes
	// from the letterhead.
	other := t.TempDir()
	r = run(t, "templates", "draft", "--out", other, filepath.Join(dir, "order.pdf"))
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, filepath.Join(other, "northwind-traders.yml"))
	require.FileExists(t, filepath.Join(other, "northwind-traders.samples", "order.json"))
}

func TestTemplatesDraftUsage(t *testing.T) {
	t.Parallel()
	r := run(t, "templates", "draft")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "usage: intakectl templates draft")
	r = run(t, "templates", "draft", filepath.Join(t.TempDir(), "missing.pdf"))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "missing.pdf")
}
