package intakectl_test

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// dlqDoc creates a document of client acme and moves it to dlq as the
// processor would.
func dlqDoc(t *testing.T, st *store.Store, msg string) document.Document {
	t.Helper()
	sum := sha256.Sum256([]byte(msg))
	d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: uuid.NewString(), ClientID: "acme", MessageID: msg,
		FileSHA256: sum[:], FileSize: 1, Filename: "a.pdf", Subject: "PO", Template: "acme",
		SourceKey: "sources/" + msg + ".pdf", SourcePath: "s3://b/sources/" + msg + ".pdf"}
	m := jobs.Process("intake", d, 1, d.CreatedAt)
	d, _, err := st.CreateDocument(t.Context(), d, m)
	require.NoError(t, err)
	_, err = st.RecordFailure(t.Context(), d.ID, document.StateReceived, "processor", "extract: pdf unreadable: broken xref")
	require.NoError(t, err)
	d, err = st.Transition(t.Context(), store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateDLQ,
		Actor: "processor", Detail: "3 failed attempts, last: extract: pdf unreadable"})
	require.NoError(t, err)
	return d
}

func TestDLQ(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme", Name: "ACME"}))
	_, err = pool.Exec(t.Context(), `UPDATE outbox SET sent_at = now()`) // nothing to publish yet
	require.NoError(t, err)

	ns := queuetest.Server(t)
	_, js := queuetest.Connect(t, ns.ClientURL())
	q := queuetest.Ensure(t, js, nil)
	env := map[string]string{"INTAKE_DATABASE_URL": url, "INTAKE_NATS_URL": ns.ClientURL(), "INTAKE_STREAM": q.Stream,
		"INTAKE_SUBJECT_PREFIX": q.SubjectPrefix, "USER": "alice"}
	a, b, c := dlqDoc(t, st, "a"), dlqDoc(t, st, "b"), dlqDoc(t, st, "c")
	_, err = pool.Exec(t.Context(), `UPDATE outbox SET sent_at = now()`)
	require.NoError(t, err)

	r := runEnv(t, env, "dlq", "list")
	require.Equal(t, 0, r.code, r.stderr)
	for _, d := range []document.Document{a, b, c} {
		require.Contains(t, r.stdout, d.LogID)
	}
	require.Contains(t, r.stdout, "3 failed attempts")

	r = runEnv(t, env, "dlq", "show", a.LogID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "state          dlq")
	require.Contains(t, r.stdout, "failures       1")
	require.Contains(t, r.stdout, "received → dlq")
	require.Contains(t, r.stdout, "broken xref")

	// requeue one: back to received, with a new process job on the stream.
	r = runEnv(t, env, "dlq", "requeue", a.LogID)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := st.Document(t.Context(), a.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
	ev, err := st.Events(t.Context(), a.ID)
	require.NoError(t, err)
	require.Equal(t, "operator:alice", ev[len(ev)-1].Actor)
	msg, err := js.Stream(t.Context(), q.Stream)
	require.NoError(t, err)
	raw, err := msg.GetLastMsgForSubject(t.Context(), q.SubjectPrefix+".process.acme")
	require.NoError(t, err)
	require.Equal(t, a.LogID+":process:2", raw.Header.Get(jetstream.MsgIDHeader))
	job, err := jobs.ParseProcess(raw.Data)
	require.NoError(t, err)
	require.EqualValues(t, 2, job.GetAttempt())

	require.Equal(t, 1, runEnv(t, env, "dlq", "requeue", a.LogID).code, "not in dlq any more")
	require.Equal(t, 2, runEnv(t, env, "dlq", "requeue").code, "LOG_ID or --all")

	// fail one: finished_with_failure.
	r = runEnv(t, env, "dlq", "fail", b.LogID)
	require.Equal(t, 0, r.code, r.stderr)
	got, err = st.Document(t.Context(), b.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateFinishedWithFailure, got.State)

	// requeue --all takes the rest; with NATS gone the jobs stay in the
	// outbox for the services' relays.
	env["INTAKE_NATS_URL"] = "nats://127.0.0.1:1"
	r = runEnv(t, env, "dlq", "requeue", "--all")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, c.LogID)
	require.Contains(t, r.stderr, "relay will publish")
	pending, err := st.PendingOutbox(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, pending)
	r = runEnv(t, env, "dlq", "list")
	require.Equal(t, 0, r.code)
	require.NotContains(t, r.stdout, c.LogID)
}

func TestMappings(t *testing.T) {
	t.Parallel()
	st, env, write := acmeDB(t)

	good := write("articles.csv", "key,value\nB-1,S-100\n\"N-2\", S-200\n\n")
	r := runEnv(t, env, "mappings", "import", "--client", "acme", "--kind", "article", good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "imported 2 article mapping(s)")
	v, ok, err := st.LookupMapping(t.Context(), "acme", "article", "N-2")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "S-200", v)

	r = runEnv(t, env, "mappings", "list", "--client", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "article  B-1  S-100")

	for name, body := range map[string]string{"three.csv": "B-1,S-1,x\n", "empty-value.csv": "B-1,\n", "dup.csv": "B-1,S-1\nB-1,S-2\n"} {
		r = runEnv(t, env, "mappings", "import", "--client", "acme", "--kind", "article", write(name, body))
		require.Equal(t, 1, r.code, name)
		require.Contains(t, r.stderr, name+":", "the error names the file and line")
	}
	v, _, _ = st.LookupMapping(t.Context(), "acme", "article", "B-1")
	require.Equal(t, "S-100", v, "a bad file imports nothing")
	r = runEnv(t, env, "mappings", "import", "--client", "nobody", "--kind", "article", good)
	require.Equal(t, 1, r.code)
	require.Equal(t, 2, runEnv(t, env, "mappings", "import", "--client", "acme", good).code, "--kind is required")

	r = runEnv(t, env, "mappings", "delete", "--client", "acme", "--kind", "article", "B-1")
	require.Equal(t, 0, r.code, r.stderr)
	_, ok, err = st.LookupMapping(t.Context(), "acme", "article", "B-1")
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, 1, runEnv(t, env, "mappings", "delete", "--client", "acme", "--kind", "article", "B-1").code)
	require.False(t, strings.Contains(runEnv(t, env, "mappings", "list", "--client", "acme").stdout, "B-1"))
}
