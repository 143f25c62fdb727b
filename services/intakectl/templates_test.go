package intakectl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// acmeTemplate reads "PO n" as order_id; v2 of the author's work reads
// "Order n" too.
const acmeV1 = `issuer: Acme
keywords: [ACME ORDER]
fields:
  order_id:
    parser: regex
    regex: 'PO (\d+)'
docintake:
  name: acme
  party_ids: ["4711"]
`

const acmeV2 = `issuer: Acme
keywords: [ACME ORDER]
fields:
  order_id:
    parser: regex
    regex: '(?:PO|Order) (\d+)'
docintake:
  name: acme
  party_ids: ["4711"]
`

// sampleJSON is what `intakectl extract --output json` prints for text with
// order id id (invoice2data's desc and currency defaults included).
func sampleJSON(id string) []byte {
	return []byte(`[{"issuer": "Acme", "order_id": "` + id + `", "currency": "EUR", "desc": "Invoice from Acme"}]`)
}

func TestTemplatesLifecycleCLI(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "globex", Name: "Globex"}))
	env := map[string]string{"INTAKE_DATABASE_URL": url, "USER": "alice"}

	dir := fixture(t, map[string][]byte{
		"acme.yml":                  []byte(acmeV1),
		"acme.samples/po.txt":       []byte("ACME ORDER\nPO 100\n"),
		"acme.samples/po.json":      sampleJSON("100"),
		"acme.samples/order.txt":    []byte("ACME ORDER\nOrder 200\n"),
		"acme.samples/order.json":   sampleJSON("200"),
		"acme.samples/invoice.txt":  []byte("SOMETHING ELSE\n"),
		"acme.samples/invoice.json": []byte(`{"status": "rejected", "status_reason": "unknown_format"}`),
	})
	tf := filepath.Join(dir, "acme.yml")

	// v1 fails the "Order 200" sample: test says so, push refuses and
	// stores nothing.
	r := runEnv(t, env, "templates", "test", dir)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stdout, "acme: pass po.txt\n")
	require.Contains(t, r.stdout, "acme: pass invoice.txt\n")
	require.Contains(t, r.stdout, "acme: FAIL order.txt: order_id: missing\n")
	require.Contains(t, r.stdout, "1 templates (0 invalid), 3 samples, 2 passed, 1 failed")
	r = runEnv(t, env, "templates", "push", dir)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "refused, nothing stored")
	list, err := st.ListTemplates(t.Context(), store.TemplatesFilter{All: true})
	require.NoError(t, err)
	require.Empty(t, list)

	// --force stores it and records that it was forced.
	r = runEnv(t, env, "templates", "push", "--force", "--comment", "first cut", tf)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "acme v1\n")
	v, err := st.TemplateVersion(t.Context(), "", "acme", 1)
	require.NoError(t, err)
	require.True(t, v.Forced)
	require.Equal(t, "intakectl:alice", v.PushedBy)
	require.Equal(t, "first cut", v.Comment)
	require.Len(t, v.Samples, 6, "samples are stored with the version")

	// The fix passes its samples and becomes v2; pushing it again changes
	// nothing.
	require.NoError(t, os.WriteFile(tf, []byte(acmeV2), 0o600))
	r = runEnv(t, env, "templates", "test", tf)
	require.Equal(t, 0, r.code, r.stdout)
	r = runEnv(t, env, "templates", "push", tf)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "acme v2\n")
	r = runEnv(t, env, "templates", "push", tf)
	require.Contains(t, r.stdout, "acme unchanged\n")

	r = runEnv(t, env, "templates", "diff", "acme", "1", "2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "-    regex: 'PO (\\d+)'\n+    regex: '(?:PO|Order) (\\d+)'\n")

	r = runEnv(t, env, "templates", "rollback", "acme", "--to", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "acme v3\n", r.stdout)
	r = runEnv(t, env, "templates", "show", "acme")
	require.Equal(t, acmeV1, r.stdout)
	r = runEnv(t, env, "templates", "show", "acme", "--version", "2")
	require.Equal(t, acmeV2, r.stdout)
	r = runEnv(t, env, "templates", "history", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 4)
	require.True(t, strings.HasPrefix(lines[3], "*v3"), lines[3])
	require.Contains(t, lines[3], "rollback to v1")

	// A client's own copy; list --json shows both scopes.
	r = runEnv(t, env, "templates", "push", "--client", "globex", tf)
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, runEnv(t, env, "templates", "disable", "acme").err())
	r = runEnv(t, env, "templates", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got, 2)
	require.Equal(t, "acme", got[0]["name"])
	require.Nil(t, got[0]["client"])
	require.EqualValues(t, 3, got[0]["version"])
	require.Equal(t, false, got[0]["enabled"])
	require.Equal(t, []any{"4711"}, got[0]["party_ids"])
	require.NotEmpty(t, got[0]["updated_at"])
	require.Equal(t, "globex", got[1]["client"])
	require.Equal(t, true, got[1]["enabled"])

	// pull writes the current versions with samples, ready to push again.
	out := t.TempDir()
	r = runEnv(t, env, "templates", "pull", out)
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(filepath.Join(out, "acme.yml"))
	require.NoError(t, err)
	require.Equal(t, acmeV1, string(b))
	b, err = os.ReadFile(filepath.Join(out, "acme.samples", "order.json"))
	require.NoError(t, err)
	require.Equal(t, string(sampleJSON("200")), string(b))

	r = runEnv(t, env, "templates", "show", "nope")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "no global template named")
}

func (r result) err() error {
	if r.code != 0 {
		return &cliError{r}
	}
	return nil
}

type cliError struct{ r result }

func (e *cliError) Error() string { return e.r.stderr }
