package intakectl_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle/lifecycletest"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// Learning from a review with intakectl, on the corpus's Contoso PO
// contoso-po-Adatum-Adel.pdf (PO # 190122 of 7/27/2019) and a Contoso
// template that misses the order number: review draft drafts from the
// corrected order; review sample, once approved, stores the PDF and the
// confirmed order as a sample; templates pull, fix, test and push take the
// fix with the sample; review map writes a mapping for the client.
func TestReviewLearnCommands(t *testing.T) {
	t.Parallel()
	pdf, err := os.ReadFile(repotest.Shared(t, "corpus", "orders", "contoso-po-Adatum-Adel.pdf"))
	require.NoError(t, err)
	yml, err := os.ReadFile(filepath.Join(repotest.Root(t), "deploy", "templates", "contoso-po.yml"))
	require.NoError(t, err)
	url, pool := schemaPool(t)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme", Name: "ACME", Review: document.ReviewHold}))
	broken := bytes.Replace(yml, []byte(`regex: 'PO #\s+(\d+)'`), []byte(`regex: 'PO No\.\s+(\d+)'`), 1)
	_, err = st.PushTemplate(t.Context(), store.TemplatePush{Name: "contoso-po", Filename: "contoso-po.yml", Content: broken, PushedBy: "t"})
	require.NoError(t, err)
	dataDir := t.TempDir()
	objs, err := objectstore.NewFS(filepath.Join(dataDir, "objects"))
	require.NoError(t, err)
	env := map[string]string{"INTAKE_DATABASE_URL": url, "USER": "carol", "INTAKE_DATA_DIR": dataDir, "INTAKE_PDF_ENGINE": "pdftotext"}
	text := &catalogue.SampleText{}
	t.Cleanup(func() { _ = text.Close() })
	d := lifecycletest.Process(t, st, objs, text.Text, "acme", "contoso-po", pdf)

	r := runEnv(t, env, "review", "sample", d.LogID)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "approve its corrected order first")

	r = runEnv(t, env, "review", "show", d.LogID, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var show struct {
		Order resultjson.Order `json:"order"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &show))
	show.Order.OrderID = "190122" // as printed: "PO # 190122"
	orderFile := filepath.Join(t.TempDir(), "order.json")
	b, err := json.Marshal(show.Order)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(orderFile, b, 0o600))

	out := t.TempDir()
	r = runEnv(t, env, "review", "draft", d.LogID, "--order", orderFile, "--out", out)
	sample := "review-" + d.LogID
	require.Contains(t, r.stderr, "read back: "+sample+".pdf as confirmed")
	require.FileExists(t, filepath.Join(out, "contoso-po.yml"))
	require.FileExists(t, filepath.Join(out, "contoso-po.samples", sample+".pdf"))
	require.FileExists(t, filepath.Join(out, "contoso-po.samples", sample+".json"))
	require.NotContains(t, r.stdout, "order_id:", "the draft reads the corrected order number")

	r = runEnv(t, env, "review", "approve", d.LogID, "--order", orderFile)
	require.Equal(t, 0, r.code, r.stderr)
	r = runEnv(t, env, "review", "sample", d.LogID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, d.LogID+": added as sample "+sample+".pdf of template contoso-po v2 (global)")
	require.Contains(t, r.stdout, "contoso-po: FAIL "+sample+".pdf")
	require.Contains(t, r.stdout, "stored as forced")
	ev, err := st.Events(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, "operator:carol", ev[len(ev)-1].Actor)

	// The template's author: pull, fix the order number, test, push.
	dir := t.TempDir()
	r = runEnv(t, env, "templates", "pull", dir)
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, filepath.Join(dir, "contoso-po.samples", sample+".pdf"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "contoso-po.yml"), yml, 0o600))
	r = runEnv(t, env, "templates", "test", filepath.Join(dir, "contoso-po.yml"))
	require.Equal(t, 0, r.code, r.stdout)
	require.Contains(t, r.stdout, "contoso-po: pass "+sample+".pdf")
	r = runEnv(t, env, "templates", "push", dir)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "contoso-po v3")

	r = runEnv(t, env, "review", "map", d.LogID, "--kind", "article", "--key", "MM4-4010", "--value", "S-4010", "--as", "dave")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `mapping article "MM4-4010" → "S-4010" added for client acme`)
	v, ok, err := st.LookupMapping(t.Context(), "acme", "article", "MM4-4010")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "S-4010", v)
	r = runEnv(t, env, "review", "map", d.LogID, "--kind", "article", "--key", "MM4-4010")
	require.Equal(t, 1, r.code, "a mapping needs a value")
}
