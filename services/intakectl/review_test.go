package intakectl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// heldDoc creates a document of acme held for review (document_id_missing)
// whose reading is in objs, its attempt pinned to the current acme version.
func heldDoc(t *testing.T, st *store.Store, objs objectstore.Store) document.Document {
	t.Helper()
	logID := uuid.NewString()
	d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: logID, ClientID: "acme", MessageID: "m-" + logID,
		FileSHA256: make([]byte, 32), FileSize: 1, Filename: "a.pdf", Subject: "PO", Template: "acme",
		SourceKey: "sources/" + logID + ".pdf", SourcePath: "file:///sources/" + logID + ".pdf"}
	d, _, err := st.CreateDocument(t.Context(), d, jobs.Process("intake", d, 1, d.CreatedAt))
	require.NoError(t, err)
	ti, err := st.Template(t.Context(), "", "acme")
	require.NoError(t, err)
	_, _, err = st.PinAttempt(t.Context(), d.ID, store.AttemptTemplate{Attempt: 1, TemplateID: ti.ID, Name: "acme",
		Version: ti.Version, SHA256: ti.SHA256}, d.State, "processor")
	require.NoError(t, err)
	o := order.Order{Type: order.TypeOrder, IssueDate: order.Date{Year: 2026, Month: 2, Day: 3}, Currency: "EUR",
		Items: []order.Item{{Position: "1", BuyerArticleID: "B-1", Quantity: "2", UnitPrice: "3.00", LineAmount: "6.00"}}}
	require.NoError(t, lifecycle.PutReading(t.Context(), objs, d, lifecycle.Reading{Reason: document.ReasonDocumentIDMissing,
		Detail: "no order id (field order_id)", Canonical: o, Result: resultjson.File{LogID: d.LogID, Order: resultjson.OrderOf(&o)}}))
	r := document.ReasonDocumentIDMissing
	d, err = st.HoldForReview(t.Context(), store.Change{DocumentID: d.ID, From: d.State, To: document.StateProcessedRejected,
		Reason: &r, Actor: "processor", Detail: "no order id; held for review"}, time.Now().Add(time.Hour))
	require.NoError(t, err)
	return d
}

// intakectl review: list, show --json in the issue's shape, approve refused
// (exit 1) while the order does not close, approved once it does, release.
func TestReviewCommands(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme", Name: "ACME", Review: document.ReviewHold}))
	_, err = st.PushTemplate(t.Context(), store.TemplatePush{Name: "acme", Filename: "acme.yml", Content: []byte(acmeV1), PushedBy: "t"})
	require.NoError(t, err)
	dataDir := t.TempDir()
	objs, err := objectstore.NewFS(filepath.Join(dataDir, "objects"))
	require.NoError(t, err)
	env := map[string]string{"INTAKE_DATABASE_URL": url, "USER": "carol", "INTAKE_DATA_DIR": dataDir}
	d := heldDoc(t, st, objs)

	r := runEnv(t, env, "review", "list", "--client", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, d.LogID)
	require.Contains(t, r.stdout, "document_id_missing")
	r = runEnv(t, env, "review", "list", "--client", "other")
	require.NotContains(t, r.stdout, d.LogID)

	r = runEnv(t, env, "review", "show", d.LogID, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var show struct {
		LogID  string           `json:"log_id"`
		Reason string           `json:"reason"`
		Detail string           `json:"detail"`
		Order  resultjson.Order `json:"order"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &show))
	require.Equal(t, d.LogID, show.LogID)
	require.Equal(t, "document_id_missing", show.Reason)
	require.Equal(t, "no order id (field order_id)", show.Detail)
	require.Equal(t, "6.00", show.Order.Items[0].LineAmount)

	fixed := show.Order
	fixed.OrderID = "4711"
	fixed.Items[0].Quantity = "3" // 3 × 3.00 ≠ 6.00
	file := filepath.Join(t.TempDir(), "order.json")
	write := func() {
		b, err := json.Marshal(fixed)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, b, 0o600))
	}
	write()
	r = runEnv(t, env, "review", "approve", d.LogID, "--order", file)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "does not close")
	require.Contains(t, r.stderr, "line_amount")

	fixed.Items[0].LineAmount = "9.00"
	write()
	r = runEnv(t, env, "review", "approve", d.LogID, "--order", file, "--comment", "qty per phone")
	require.Equal(t, 0, r.code, r.stderr)
	got, err := st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, got.State)
	ev, err := st.Events(t.Context(), d.ID)
	require.NoError(t, err)
	last := ev[len(ev)-1]
	require.Equal(t, "operator:carol", last.Actor)
	require.Contains(t, last.Detail, `items[0].quantity: "2" → "3"`)

	r = runEnv(t, env, "review", "release", d.LogID)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "not held for review")

	other := heldDoc(t, st, objs)
	r = runEnv(t, env, "review", "release", other.LogID, "--as", "dave")
	require.Equal(t, 0, r.code, r.stderr)
	_, held, err := st.ReviewUntil(t.Context(), other.ID)
	require.NoError(t, err)
	require.False(t, held)

	r = runEnv(t, env, "review", "approve", d.LogID)
	require.Equal(t, 2, r.code, "--order is required")
}
