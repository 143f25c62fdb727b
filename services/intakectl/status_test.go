package intakectl_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := storetest.SchemaURL(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	srv := queuetest.Server(t)
	_, js := queuetest.Connect(t, srv.ClientURL())
	qcfg := queuetest.Ensure(t, js, nil)
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme"}, store.TokenHash("t")))

	// Two uploads; one of them failed into the dlq. Its process job and the
	// other's are published, nothing consumes them.
	pub := queue.NewPublisher(js, qcfg.Stream)
	var dlq document.Document
	for i, mid := range []string{"m-1", "m-2"} {
		d := document.Document{ID: uuid.NewString(), LogID: uuid.NewString(), ClientID: "acme", MessageID: mid,
			FileSHA256: make([]byte, 32), FileSize: 10, Filename: "a.pdf", Subject: "s", Template: "contoso-po",
			SourceKey: "sources/" + mid + ".pdf"}
		job := jobs.Process(qcfg.SubjectPrefix, d, 1, time.Now())
		d, _, err := st.CreateDocument(ctx, d, job)
		require.NoError(t, err)
		require.NoError(t, pub.Publish(ctx, job.Subject, job.MsgID, job.Payload))
		if i == 0 {
			dlq, err = st.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateDLQ,
				Actor: "processor", Detail: "extraction timed out after 20s"})
			require.NoError(t, err)
		}
	}

	// An orphaned source object a processor removed (an upload killed
	// before its commit).
	first, err := st.RecordOrphanRemoved(ctx, "sources/2026/11/24/gone.pdf")
	require.NoError(t, err)
	require.True(t, first)

	env := map[string]string{"INTAKE_DATABASE_URL": url, "INTAKE_NATS_URL": srv.ClientURL(),
		"INTAKE_STREAM": qcfg.Stream, "INTAKE_SUBJECT_PREFIX": qcfg.SubjectPrefix}
	r := runEnv(t, env, "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep struct {
		States map[string]int `json:"states"`
		Queues []struct {
			Consumer string  `json:"consumer"`
			Pending  uint64  `json:"pending"`
			Oldest   float64 `json:"oldest_pending_seconds"`
			Error    string  `json:"error"`
		} `json:"queues"`
		OutboxUnsent   int `json:"outbox_unsent"`
		OrphansRemoved int `json:"orphans_removed"`
		DLQ            []struct {
			LogID     string `json:"log_id"`
			LastError string `json:"last_error"`
		} `json:"dlq"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.Equal(t, 1, rep.States["received"])
	require.Equal(t, 1, rep.States["dlq"])
	require.Equal(t, 0, rep.States["finished_success"], "every state is listed")
	require.Len(t, rep.Queues, 2)
	require.Equal(t, "processor", rep.Queues[0].Consumer)
	require.Empty(t, rep.Queues[0].Error)
	require.Equal(t, uint64(2), rep.Queues[0].Pending)
	require.Greater(t, rep.Queues[0].Oldest, 0.0)
	require.Equal(t, uint64(0), rep.Queues[1].Pending)
	require.Equal(t, 2, rep.OutboxUnsent, "this test published without the relay")
	require.Equal(t, 1, rep.OrphansRemoved)
	require.Len(t, rep.DLQ, 1)
	require.Equal(t, dlq.LogID, rep.DLQ[0].LogID)
	require.Equal(t, "extraction timed out after 20s", rep.DLQ[0].LastError)

	r = runEnv(t, env, "status")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^dlq\s+1$`, r.stdout)
	require.Regexp(t, `(?m)^processor\s+2\s+\d+(ms|s|m)`, r.stdout)
	require.Contains(t, r.stdout, dlq.LogID)
	require.Regexp(t, `(?m)^orphaned source objects removed\s+1 \(1 in the last 24h\)$`, r.stdout)

	// Without NATS the database half still prints; the exit code says a
	// part is missing.
	env["INTAKE_NATS_URL"] = "nats://127.0.0.1:1"
	r = runEnv(t, env, "status")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout, "unavailable")
	require.Regexp(t, `(?m)^received\s+1$`, r.stdout)
}
