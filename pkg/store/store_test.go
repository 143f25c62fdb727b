package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// fixedDay dates the object keys of test documents.
var fixedDay = time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC)

func setup(t *testing.T) (*store.Store, context.Context) {
	t.Helper()
	s := storetest.Store(t)
	ctx := t.Context()
	require.NoError(t, s.UpsertClient(ctx, document.Client{ID: "acme", Name: "ACME"}, store.TokenHash("tok-acme")))
	require.NoError(t, s.UpsertClient(ctx, document.Client{ID: "globex", Name: "Globex"}, store.TokenHash("tok-globex")))
	return s, ctx
}

func newDoc(client, messageID string, content string) (document.Document, store.OutboxRow) {
	sum := sha256.Sum256([]byte(content))
	id := uuid.Must(uuid.NewV7()).String()
	logID := uuid.NewString()
	d := document.Document{ID: id, LogID: logID, ClientID: client, MessageID: messageID, FileSHA256: sum[:],
		FileSize: int64(len(content)), Filename: "a.pdf", Subject: "PO", Template: "contoso-po"}
	d.SourceKey = objectstore.SourceKey(logID, fixedDay)
	d.SourcePath = "s3://b/" + d.SourceKey
	return d, store.OutboxRow{Subject: "intake.process." + client, MsgID: logID + ":process:1", Payload: []byte(logID)}
}

// succeeded is c with the result objects a processed_success carries (the
// schema refuses a success without them).
func succeeded(c store.Change, logID string) store.Change {
	c.ResultKey = ptr(objectstore.ResultKey(logID, fixedDay, "xml"))
	c.ResultJSONKey = ptr(objectstore.ResultKey(logID, fixedDay, "json"))
	c.ResultPath, c.ResultJSONPath = ptr("s3://b/"+*c.ResultKey), ptr("s3://b/"+*c.ResultJSONKey)
	return c
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t)
	require.NoError(t, store.Migrate(t.Context(), pool))
	require.NoError(t, store.Migrate(t.Context(), pool))
}

func TestClientByToken(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	c, err := s.ClientByToken(ctx, "tok-acme")
	require.NoError(t, err)
	require.Equal(t, "acme", c.ID)
	for _, bad := range []string{"", "tok-acm", "tok-acme ", "TOK-ACME"} {
		_, err := s.ClientByToken(ctx, bad)
		require.Equal(t, document.EUNAUTHENTICATED, document.ErrorKind(err), bad)
	}
	// Rotation: a second token works alongside the first, and revoking one
	// leaves the other valid.
	require.NoError(t, s.UpsertClient(ctx, document.Client{ID: "acme", Name: "ACME 2"}, store.TokenHash("tok-acme-2")))
	c, err = s.ClientByToken(ctx, "tok-acme-2")
	require.NoError(t, err)
	require.Equal(t, "ACME 2", c.Name)
	require.NoError(t, s.DeleteClientToken(ctx, "acme", store.TokenHash("tok-acme")))
	_, err = s.ClientByToken(ctx, "tok-acme")
	require.Equal(t, document.EUNAUTHENTICATED, document.ErrorKind(err))
	// A token cannot be claimed by a second client.
	err = s.UpsertClient(ctx, document.Client{ID: "globex"}, store.TokenHash("tok-acme-2"))
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	err = s.UpsertClient(ctx, document.Client{ID: "Bad Id"})
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
}

func TestCreateDocumentIdempotent(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m-1", "pdf one")
	got, created, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, document.StateReceived, got.State)

	// Same message id, same file: the original comes back, nothing new.
	d2, job2 := newDoc("acme", "m-1", "pdf one")
	again, created, err := s.CreateDocument(ctx, d2, job2)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, got.LogID, again.LogID)

	// Same message id, other file.
	d3, job3 := newDoc("acme", "m-1", "pdf two")
	_, _, err = s.CreateDocument(ctx, d3, job3)
	e, ok := document.AsError(err)
	require.True(t, ok)
	require.Equal(t, "duplicate_message_id", e.Code)

	// Another client may use the same message id.
	d4, job4 := newDoc("globex", "m-1", "pdf two")
	_, created, err = s.CreateDocument(ctx, d4, job4)
	require.NoError(t, err)
	require.True(t, created)

	n, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "one outbox row per created document")
	ev, err := s.Events(ctx, got.ID)
	require.NoError(t, err)
	require.Len(t, ev, 1)
	require.Equal(t, document.StateReceived, ev[0].To)
}

func TestCreateDocumentConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	const n = 20
	start := make(chan struct{})
	var wg sync.WaitGroup
	logIDs := make([]string, n)
	createdCount := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, job := newDoc("acme", "same", "same bytes")
			<-start
			got, created, err := s.CreateDocument(ctx, d, job)
			logIDs[i], createdCount[i], errs[i] = got.LogID, created, err
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, logIDs[0], logIDs[i])
		if createdCount[i] {
			created++
		}
	}
	require.Equal(t, 1, created)
	var rows int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM documents`).Scan(&rows))
	require.Equal(t, 1, rows)
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, pending)
}

func TestDocumentTenantScope(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m", "x")
	_, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	_, err = s.DocumentByLogID(ctx, "acme", d.LogID)
	require.NoError(t, err)
	for _, c := range []struct{ client, log string }{{"globex", d.LogID}, {"acme", "nope"}} {
		_, err = s.DocumentByLogID(ctx, c.client, c.log)
		e, ok := document.AsError(err)
		require.True(t, ok)
		require.Equal(t, document.ENOTFOUND, e.Kind)
		require.Equal(t, "document_not_found", e.Code)
	}
}

func TestTransitionCompareAndSet(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m", "x")
	_, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)

	// Not in the table: refused before touching the row.
	_, err = s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateSentSuccess, Actor: "t"})
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))

	// Racing workers: exactly one wins received → processed_*.
	const n = 10
	start := make(chan struct{})
	var wg sync.WaitGroup
	wins := make(chan int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			to := document.StateProcessedSuccess
			if i%2 == 1 {
				to = document.StateProcessedRejected
			}
			_, err := s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: to, Actor: fmt.Sprint(i),
				Reason: ptr(document.ReasonNotAnOrder), ResultKey: ptr("r.xml"), ResultPath: ptr("s3://b/r.xml"),
				ResultJSONKey: ptr("r.json"), ResultJSONPath: ptr("s3://b/r.json"), CountAttempt: true,
				Outbox: []store.OutboxRow{{Subject: "intake.deliver.acme", MsgID: fmt.Sprintf("%s:deliver:%d", d.LogID, i)}}})
			if err == nil {
				wins <- i
			} else {
				require.Equal(t, document.ECONFLICT, document.ErrorKind(err), "%v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(wins)
	require.Len(t, wins, 1)
	got, err := s.Document(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, "s3://b/r.xml", got.ResultPath)
	require.Equal(t, "r.xml", got.ResultKey)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, document.ReasonNotAnOrder, got.StatusReason)
	ev, err := s.Events(ctx, d.ID)
	require.NoError(t, err)
	require.Len(t, ev, 2, "one creating event, one winning transition")
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, pending, "process job + the winner's deliver job")

	_, err = s.Transition(ctx, store.Change{DocumentID: uuid.NewString(), From: document.StateReceived, To: document.StateDLQ, Actor: "t"})
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
}

// A row an older release's relay published and marked with sent_at during a
// rolling upgrade is deleted by the next claim, not published again.
func TestRelayOutboxDeletesLegacySentRows(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	for _, id := range []string{"old-sent", "unsent"} {
		require.NoError(t, s.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: id, Payload: []byte(id)}))
	}
	_, err := s.Pool().Exec(ctx, `UPDATE outbox SET sent_at = now() WHERE msg_id = 'old-sent'`)
	require.NoError(t, err)
	var seen []string
	n, err := s.RelayOutbox(ctx, 10, 0, func(_ context.Context, batch []store.OutboxRow) []error {
		for _, m := range batch {
			seen = append(seen, m.MsgID)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, n, "only the unsent row is published")
	require.Equal(t, []string{"unsent"}, seen)
	var left int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&left))
	require.Zero(t, left, "the legacy row went with the batch")

	// A claim that finds only legacy rows publishes nothing and still
	// deletes them.
	require.NoError(t, s.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: "old-2", Payload: []byte("x")}))
	_, err = s.Pool().Exec(ctx, `UPDATE outbox SET sent_at = now()`)
	require.NoError(t, err)
	n, err = s.RelayOutbox(ctx, 10, 0, func(_ context.Context, batch []store.OutboxRow) []error {
		t.Errorf("published legacy rows %v", batch)
		return nil
	})
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox`).Scan(&left))
	require.Zero(t, left)
}

func TestRelayOutbox(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	for i := range 5 {
		require.NoError(t, s.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: fmt.Sprint(i), Payload: []byte{byte(i)},
			Headers: map[string]string{"traceparent": fmt.Sprint("t", i)}}))
	}
	var failedID int64
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT id FROM outbox WHERE msg_id = '2'`).Scan(&failedID))
	// Rows younger than minAge belong to the relay they were handed to.
	n, err := s.RelayOutbox(ctx, 10, time.Hour, func(_ context.Context, batch []store.OutboxRow) []error {
		t.Errorf("claimed young rows %v", batch)
		return nil
	})
	require.NoError(t, err)
	require.Zero(t, n)
	// The batch comes in id order; a row whose publish failed is given
	// back as it was, the published ones are deleted.
	var seen []string
	n, err = s.RelayOutbox(ctx, 10, 0, func(_ context.Context, batch []store.OutboxRow) []error {
		errs := make([]error, len(batch))
		for i, m := range batch {
			require.Equal(t, "t"+m.MsgID, m.Headers["traceparent"])
			seen = append(seen, m.MsgID)
			if m.MsgID == "2" {
				errs[i] = fmt.Errorf("broker down")
			}
		}
		return errs
	})
	require.ErrorContains(t, err, "broker down")
	require.Equal(t, 4, n)
	require.Equal(t, []string{"0", "1", "2", "3", "4"}, seen)
	pending, err := s.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, pending, "only the failed row is unsent")
	var rows int
	var id int64
	var headers string
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*), max(id), max(headers::text) FROM outbox`).Scan(&rows, &id, &headers))
	require.Equal(t, 1, rows, "published rows are deleted, not kept")
	require.Equal(t, failedID, id, "the failed row is back with its id")
	require.JSONEq(t, `{"traceparent": "t2"}`, headers)
	for i := 5; i < 7; i++ {
		require.NoError(t, s.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: fmt.Sprint(i), Payload: []byte{byte(i)}}))
	}

	// Two relays at once never publish the same row twice.
	var mu sync.Mutex
	count := map[string]int{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := s.RelayOutbox(ctx, 1, 0, func(_ context.Context, batch []store.OutboxRow) []error {
					mu.Lock()
					for _, m := range batch {
						count[m.MsgID]++
					}
					mu.Unlock()
					return nil
				})
				require.NoError(t, err)
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, map[string]int{"2": 1, "5": 1, "6": 1}, count)
}

// TestOutboxHandoff: the store hands the outbox rows it writes, with their
// ids, to the relay once committed: at once outside a transaction, at the
// commit inside one, never for a rollback or a lost compare-and-set.
func TestOutboxHandoff(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	var handed [][]store.OutboxRow
	s.HandOutboxTo(func(rows []store.OutboxRow) { handed = append(handed, rows) })
	require.True(t, s.HandsOutbox())
	ids := func() map[string]int64 {
		return storetest.QueryMap[string, int64](t, s.Pool(), `SELECT msg_id, id FROM outbox`)
	}

	d, _ := newDoc("acme", "m-handoff", "pdf")
	// The trace context travels with the row (the upload's span).
	trace := map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	_, created, err := s.CreateDocument(ctx, d, store.OutboxRow{Subject: "intake.process.acme", MsgID: "p1", Payload: []byte("job"),
		Headers: trace})
	require.NoError(t, err)
	require.True(t, created)
	require.Len(t, handed, 1)
	require.Equal(t, []store.OutboxRow{{ID: ids()["p1"], Subject: "intake.process.acme", MsgID: "p1", Payload: []byte("job"),
		Headers: map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}, handed[0])

	// Two rows of one state change, each with its own id.
	_, err = s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateProcessedRejected,
		Reason: ptr(document.ReasonNotAnOrder), Actor: "t", Outbox: []store.OutboxRow{
			{Subject: "intake.deliver.acme", MsgID: "d1"}, {Subject: "intake.deliver.acme", MsgID: "d2", Payload: []byte("2")}}})
	require.NoError(t, err)
	require.Len(t, handed, 2)
	want := ids()
	require.ElementsMatch(t, []store.OutboxRow{
		{ID: want["d1"], Subject: "intake.deliver.acme", MsgID: "d1", Payload: []byte{}},
		{ID: want["d2"], Subject: "intake.deliver.acme", MsgID: "d2", Payload: []byte("2")}}, handed[1])

	// A lost compare-and-set writes and hands nothing.
	_, err = s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateProcessedRejected,
		Reason: ptr(document.ReasonNotAnOrder), Actor: "t", Outbox: []store.OutboxRow{{Subject: "intake.deliver.acme", MsgID: "lost"}}})
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	require.Len(t, handed, 2)

	// Inside a transaction: handed at the commit, not before; a rollback
	// hands nothing.
	require.NoError(t, s.WithTx(ctx, func(tx *store.Store) error {
		require.NoError(t, tx.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: "tx1"}))
		require.NoError(t, tx.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: "tx2"}))
		require.Len(t, handed, 2, "not before the commit")
		return nil
	}))
	require.Len(t, handed, 3)
	want = ids()
	require.Equal(t, []store.OutboxRow{{ID: want["tx1"], Subject: "s", MsgID: "tx1", Payload: []byte{}},
		{ID: want["tx2"], Subject: "s", MsgID: "tx2", Payload: []byte{}}}, handed[2])
	require.Error(t, s.WithTx(ctx, func(tx *store.Store) error {
		require.NoError(t, tx.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: "rolled-back"}))
		return errors.New("abort")
	}))
	require.Len(t, handed, 3)
	require.NotContains(t, ids(), "rolled-back")

	// The relay deletes what it published.
	require.NoError(t, s.DeleteOutbox(ctx, []int64{want["tx1"], want["d1"]}))
	require.NotContains(t, ids(), "tx1")
	require.NotContains(t, ids(), "d1")
	require.Contains(t, ids(), "tx2")

	s.HandOutboxTo(nil)
	require.False(t, s.HandsOutbox())
	require.NoError(t, s.AddOutbox(ctx, store.OutboxRow{Subject: "s", MsgID: "unhanded"}))
	require.Len(t, handed, 3)
}

func TestMappings(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	require.NoError(t, s.PutMappings(ctx, "acme", []store.Mapping{{Kind: "article", Key: "B-1", Value: "S-1"}}))
	v, ok, err := s.LookupMapping(ctx, "acme", "article", "B-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "S-1", v)
	_, ok, err = s.LookupMapping(ctx, "globex", "article", "B-1")
	require.NoError(t, err)
	require.False(t, ok, "mappings are per client")
	require.NoError(t, s.DeleteMapping(ctx, "acme", "article", "B-1"))
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(s.DeleteMapping(ctx, "acme", "article", "B-1")))
}
