package intakectl_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// failedDoc creates a document of acme that ended finished_with_failure
// (dlq, given up), its attempt pinned to the current acme version.
func failedDoc(t *testing.T, st *store.Store, msg string) document.Document {
	t.Helper()
	d := dlqDoc(t, st, msg)
	ti, err := st.Template(t.Context(), "", "acme")
	require.NoError(t, err)
	_, _, err = st.PinAttempt(t.Context(), d.ID, store.AttemptTemplate{Attempt: 1, TemplateID: ti.ID, Name: "acme",
		Version: ti.Version, SHA256: ti.SHA256}, d.State, "processor")
	require.NoError(t, err)
	d, err = st.Transition(t.Context(), store.Change{DocumentID: d.ID, From: d.State, To: document.StateFinishedWithFailure, Actor: "test"})
	require.NoError(t, err)
	return d
}

func TestReprocessAndDocumentsShow(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme", Name: "ACME"}))
	env := map[string]string{"INTAKE_DATABASE_URL": url, "USER": "bob", "INTAKE_NATS_URL": "nats://127.0.0.1:1"}
	_, err = st.PushTemplate(t.Context(), store.TemplatePush{Name: "acme", Filename: "acme.yml", Content: []byte(acmeV1), PushedBy: "t"})
	require.NoError(t, err)

	d := failedDoc(t, st, "one")
	r := runEnv(t, env, "documents", "show", d.LogID, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var show map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &show))
	require.Equal(t, "acme", show["template"])
	require.EqualValues(t, 1, show["template_version"])
	require.Len(t, show["attempts"], 1)

	// A document still being worked on cannot be reprocessed.
	busy := failedDoc(t, st, "busy")
	_, err = pool.Exec(t.Context(), `UPDATE documents SET state = 'received' WHERE id = $1`, busy.ID)
	require.NoError(t, err)
	r = runEnv(t, env, "reprocess", busy.LogID)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "only finished or dlq documents can be reprocessed")

	_, err = st.PushTemplate(t.Context(), store.TemplatePush{Name: "acme", Filename: "acme.yml", Content: []byte(acmeV2), PushedBy: "t"})
	require.NoError(t, err)
	r = runEnv(t, env, "reprocess", d.LogID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, d.LogID+": reprocessing\n", r.stdout)
	got, err := st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
	n, err := st.CurrentAttempt(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, 2, n, "a new attempt")
	ev, err := st.Events(t.Context(), d.ID)
	require.NoError(t, err)
	last := ev[len(ev)-1]
	require.Equal(t, "operator:bob", last.Actor)
	require.Equal(t, document.StateFinishedWithFailure, last.From)

	// Bulk: a progress bar on a terminal; here (no terminal) one line per
	// document on stdout, as upload prints them.
	for i := range 12 {
		failedDoc(t, st, fmt.Sprintf("bulk-%d", i))
	}
	r = runEnv(t, env, "reprocess", "--client", "acme", "--template", "acme", "--state", "finished_with_failure")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 12, strings.Count(r.stdout, ": reprocessing\n"), r.stdout)
	require.Contains(t, r.stderr, "12 of 12 document(s) reprocessing")
	r = runEnv(t, env, "reprocess", "--client", "acme", "--template", "other")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.Contains(r.stderr, "0 of 0"), r.stderr)
}
