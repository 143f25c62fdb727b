package intakectl_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// clients set --revisions order|orderchange changes how a client's revised
// POs are delivered, clients show prints it, anything else is a usage
// error.
func TestClientsSetRevisions(t *testing.T) {
	t.Parallel()
	st, env, _ := acmeDB(t)
	r := runEnv(t, env, "clients", "show", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^revisions: +orderchange$`, r.stdout, "the default")
	r = runEnv(t, env, "clients", "set", "acme", "--revisions", "order")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^revisions: +order$`, r.stdout)
	f, err := st.RevisionFormat(t.Context(), "acme")
	require.NoError(t, err)
	require.Equal(t, document.RevisionsOrder, f)
	r = runEnv(t, env, "clients", "set", "acme", "--revisions", "ORDERCHANGE")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--revisions must be orderchange or order")
	r = runEnv(t, env, "clients", "set", "acme", "--revisions", "orderchange", "--flags", "review")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^revisions: +orderchange$`, r.stdout)
	require.Regexp(t, `(?m)^flags: +review$`, r.stdout)
}

// Issue 28: "visible in the document's history and in intakectl documents
// show". Three held orders of one PO approved one after the other: the
// second, the same order, is ignored and its history says "duplicate of"
// the first; the third, changed on line 1 and thirteen lines longer, is a
// revision whose history lists every change, each on its own line.
func TestDocumentsShowDuplicateAndRevision(t *testing.T) {
	t.Parallel()
	st, env, write := acmeDB(t)
	_, err := st.PushTemplate(t.Context(), store.TemplatePush{Name: "acme", Filename: "acme.yml", Content: []byte(acmeV1), PushedBy: "t"})
	require.NoError(t, err)
	dataDir := t.TempDir()
	objs, err := objectstore.NewFS(filepath.Join(dataDir, "objects"))
	require.NoError(t, err)
	env["USER"], env["INTAKE_DATA_DIR"] = "carol", dataDir
	approve := func(d document.Document, edit func(o *resultjson.Order)) result {
		t.Helper()
		r := runEnv(t, env, "review", "show", d.LogID, "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var show struct {
			Order resultjson.Order `json:"order"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &show))
		show.Order.OrderID = "PO-7" // what the held document lacked
		if edit != nil {
			edit(&show.Order)
		}
		b, err := json.Marshal(show.Order)
		require.NoError(t, err)
		return runEnv(t, env, "review", "approve", d.LogID, "--order", write("order.json", string(b)))
	}

	first := heldDoc(t, st, objs)
	r := approve(first, nil)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, first.LogID+": approved; delivered as success\n", r.stdout)

	dup := heldDoc(t, st, objs)
	r = approve(dup, nil)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "ignored as its duplicate, not delivered again")
	r = runEnv(t, env, "documents", "show", dup.LogID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^state +processed_ignored$`, r.stdout)
	// The PO is the template's party 4711 and the approved order id.
	require.Contains(t, r.stdout, "duplicate of "+first.LogID+" (order PO-7 of buyer 4711, same content, delivered ")

	rev := heldDoc(t, st, objs)
	r = approve(rev, func(o *resultjson.Order) {
		o.Items[0].Quantity, o.Items[0].LineAmount = "3", "9.00"
		for i := 2; i <= 14; i++ {
			o.Items = append(o.Items, resultjson.Item{Position: fmt.Sprint(i), BuyerArticleID: fmt.Sprintf("B-%d", i),
				Quantity: "1", UnitPrice: "1.00", LineAmount: "1.00"})
		}
	})
	require.Equal(t, 0, r.code, r.stderr)
	r = runEnv(t, env, "documents", "show", rev.LogID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^state +processed_success$`, r.stdout)
	require.Contains(t, r.stdout, "revision 1 of order PO-7 (buyer 4711), changes "+first.LogID+": line 1 quantity 2 → 3\n")
	require.Regexp(t, `(?m)^ +line 1 line amount 6 → 9$`, r.stdout)
	require.Regexp(t, `(?m)^ +line 14 added \(B-14 quantity 1\)$`, r.stdout, "the last change, far past 500 characters")
	require.Greater(t, strings.Index(r.stdout, "line 14 added"), strings.Index(r.stdout, "line 2 added"))
	got, err := st.Document(t.Context(), rev.ID)
	require.NoError(t, err)
	xml, err := os.ReadFile(filepath.Join(dataDir, "objects", filepath.FromSlash(objectstore.ResultKey(got.LogID, got.CreatedAt, "xml"))))
	require.NoError(t, err)
	require.Contains(t, string(xml), "<ORDERCHANGE_SEQUENCE_ID>1</ORDERCHANGE_SEQUENCE_ID>")
}
