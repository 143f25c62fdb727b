package intakectl_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/units"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// deferredForUnits creates a document of client acme deferred, as the
// processor defers it, for the units of lines.
func deferredForUnits(t *testing.T, st *store.Store, msg string, lines units.Unresolved) document.Document {
	t.Helper()
	sum := sha256.Sum256([]byte(msg))
	d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: uuid.NewString(), ClientID: "acme", MessageID: msg,
		FileSHA256: sum[:], FileSize: 1, Filename: "a.pdf", Subject: "PO", Template: "acme",
		SourceKey: "sources/" + msg + ".pdf", SourcePath: "s3://b/sources/" + msg + ".pdf"}
	d, _, err := st.CreateDocument(t.Context(), d, jobs.Process("intake", d, 1, d.CreatedAt))
	require.NoError(t, err)
	r := document.ReasonMappingNotResolved
	d, err = st.TransitionDeferred(t.Context(), store.Change{DocumentID: d.ID, From: document.StateReceived,
		To: document.StateDeferredForRetry, Reason: &r, Actor: "processor",
		Detail: "text (pdftotext): " + lines.Detail() + " (deferral 1 of 6, next attempt in 1h0m0s)"},
		store.Deferral{RetryAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	return d
}

// review unit writes a row of the client's unit table and processes the
// documents deferred for that unit again at once (those waiting for
// another unit keep their schedule); the history names the operator. A
// code outside the BMEcat 2005 list is refused.
func TestReviewUnitCommand(t *testing.T) {
	t.Parallel()
	st, env, _ := acmeDB(t)
	env["INTAKE_DATA_DIR"] = t.TempDir()
	bund := deferredForUnits(t, st, "m-bund", units.Unresolved{{Line: 2, Position: "20", Unit: "Bund"}})
	rolle := deferredForUnits(t, st, "m-rolle", units.Unresolved{{Line: 1, Position: "10", Unit: "Rolle"}})

	r := runEnv(t, env, "review", "unit", bund.LogID, "--unit", "Bund", "--code", "bundle")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "is not a unit of the BMEcat 2005 list")

	r = runEnv(t, env, "review", "unit", bund.LogID, "--unit", "Bund", "--code", "BE", "--as", "dave")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "unit \"Bund\" → 1 × BE added for client acme\n"+bund.LogID+": waited for it; processed again now\n", r.stdout)
	rows, err := st.Units(t.Context(), "acme", nil, true)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, []string{"Bund", "bund", "BE", "1"}, []string{rows[0].Unit, rows[0].UnitKey, rows[0].Code, rows[0].Factor})
	evs, err := st.Events(t.Context(), bund.ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(evs), 2)
	added, retried := evs[len(evs)-2], evs[len(evs)-1]
	require.Equal(t, "operator:dave", added.Actor)
	require.Equal(t, `unit "Bund" → 1 × BE added to the unit table of client acme`, added.Detail)
	require.Equal(t, "operator:dave", retried.Actor)
	require.Contains(t, retried.Detail, "processed again now as process job 2")
	var seq int
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT process_seq FROM documents WHERE id = $1`, bund.ID).Scan(&seq))
	require.Equal(t, 2, seq, "a second process job")
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT process_seq FROM documents WHERE id = $1`, rolle.ID).Scan(&seq))
	require.Equal(t, 1, seq, "the document waiting for another unit keeps its schedule")

	r = runEnv(t, env, "review", "unit", bund.LogID, "--unit", "Bund", "--code", "C62", "--factor", "10", "--as", "dave")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `unit "Bund" → 10 × C62 added for client acme (was 1 × BE)`)
}
