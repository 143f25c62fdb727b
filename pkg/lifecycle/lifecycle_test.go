package lifecycle_test

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestNewDeliveryID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := lifecycle.NewDeliveryID()
		require.True(t, strings.HasPrefix(id, "msg_"), id)
		_, err := uuid.Parse(strings.TrimPrefix(id, "msg_"))
		require.NoError(t, err, id)
		require.False(t, seen[id], "duplicate webhook-id %s", id)
		seen[id] = true
	}
}

// setup returns a store with one received document of client acme and an
// empty outbox.
func setup(t *testing.T) (*store.Store, context.Context, document.Document) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	st := storetest.Store(t)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme", Name: "ACME"}, store.TokenHash("tok-acme")))
	sum := sha256.Sum256([]byte("pdf"))
	d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: uuid.NewString(), ClientID: "acme", MessageID: "m-1",
		FileSHA256: sum[:], FileSize: 3, Filename: "a.pdf", Template: "contoso-po",
		SourceKey: "sources/a.pdf", SourcePath: "s3://b/sources/a.pdf"}
	d, _, err := st.CreateDocument(ctx, d, lifecycle.ProcessJob(ctx, "intake", d, 1))
	require.NoError(t, err)
	require.Equal(t, []store.OutboxRow{{Subject: "intake.process.acme", MsgID: d.LogID + ":process:1"}}, drain(t, st))
	return st, ctx, d
}

// drain relays the outbox and returns its rows (subject and msg id).
func drain(t *testing.T, st *store.Store) []store.OutboxRow {
	t.Helper()
	var rows []store.OutboxRow
	_, err := st.RelayOutbox(t.Context(), 100, 0, func(_ context.Context, batch []store.OutboxRow) []error {
		for _, m := range batch {
			rows = append(rows, store.OutboxRow{Subject: m.Subject, MsgID: m.MsgID})
		}
		return nil
	})
	require.NoError(t, err)
	return rows
}

func move(t *testing.T, st *store.Store, d document.Document, to document.State) document.Document {
	t.Helper()
	c := store.Change{DocumentID: d.ID, From: d.State, To: to, Actor: "test"}
	if to == document.StateProcessedSuccess { // a success carries its results
		xml, js, xmlURI, jsURI := "results/a.xml", "results/a.json", "s3://b/results/a.xml", "s3://b/results/a.json"
		c.ResultKey, c.ResultPath, c.ResultJSONKey, c.ResultJSONPath = &xml, &xmlURI, &js, &jsURI
	}
	d, err := st.Transition(t.Context(), c)
	require.NoError(t, err)
	return d
}

func lastEvent(t *testing.T, st *store.Store, d document.Document) document.Event {
	t.Helper()
	ev, err := st.Events(t.Context(), d.ID)
	require.NoError(t, err)
	return ev[len(ev)-1]
}

func TestRequeueAndGiveUpOnlyFromDLQ(t *testing.T) {
	t.Parallel()
	st, ctx, d := setup(t)
	_, err := lifecycle.Requeue(ctx, st, "intake", d, "operator:ann")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	_, err = lifecycle.GiveUp(ctx, st, d, "operator:ann")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	require.Empty(t, drain(t, st))

	d = move(t, st, d, document.StateDLQ)
	got, err := lifecycle.Requeue(ctx, st, "intake", d, "operator:ann")
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
	ev := lastEvent(t, st, got)
	require.Equal(t, document.StateDLQ, ev.From)
	require.Equal(t, "operator:ann", ev.Actor)
	// The next attempt's process job, in the same transaction.
	require.Equal(t, []store.OutboxRow{{Subject: "intake.process.acme", MsgID: d.LogID + ":process:2"}}, drain(t, st))

	d = move(t, st, got, document.StateDLQ)
	got, err = lifecycle.GiveUp(ctx, st, d, "operator:bob")
	require.NoError(t, err)
	require.Equal(t, document.StateFinishedWithFailure, got.State)
	require.Equal(t, "operator:bob", lastEvent(t, st, got).Actor)
	require.Empty(t, drain(t, st), "giving up sends no second webhook")
}

func TestRedeliver(t *testing.T) {
	t.Parallel()
	st, ctx, d := setup(t)
	_, err := lifecycle.Redeliver(ctx, st, "intake", d, "operator:ann")
	require.Equal(t, document.EINVALID, document.ErrorKind(err), "a received document has nothing to deliver")

	// The first delivery of processed_success failed for good.
	d = move(t, st, d, document.StateProcessedSuccess)
	first, err := st.EnsureDelivery(ctx, store.Delivery{ID: lifecycle.NewDeliveryID(), DocumentID: d.ID, ClientID: "acme",
		LogID: d.LogID, State: document.StateProcessedSuccess, Status: document.StatusSuccess}, time.Minute)
	require.NoError(t, err)
	d = move(t, st, d, document.StateFinishedWithFailure)
	id, err := lifecycle.Redeliver(ctx, st, "intake", d, "operator:ann")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(id, "msg_"), id)
	require.NotEqual(t, first.ID, id, "a redelivery has its own webhook-id")
	dels, err := st.Deliveries(ctx, d.ID)
	require.NoError(t, err)
	require.Len(t, dels, 2)
	// The last reported outcome (processed_success), not the current
	// finished_with_failure, is what goes again.
	require.Equal(t, id, dels[1].ID)
	require.Equal(t, document.StateProcessedSuccess, dels[1].State)
	require.Equal(t, document.StatusSuccess, dels[1].Status)
	require.Equal(t, first.ID, dels[1].RedeliveryOf)
	require.Equal(t, []store.OutboxRow{{Subject: jobs.DeliverSubject("intake", "acme"), MsgID: "deliver:" + id}}, drain(t, st))

	id2, err := lifecycle.Redeliver(ctx, st, "intake", d, "operator:ann")
	require.NoError(t, err)
	require.NotEqual(t, id, id2, "every redelivery has its own webhook-id")
	dels, err = st.Deliveries(ctx, d.ID)
	require.NoError(t, err)
	require.Len(t, dels, 3)
	require.Equal(t, id, dels[2].RedeliveryOf)
}

func TestReprocess(t *testing.T) {
	t.Parallel()
	st, ctx, d := setup(t)
	_, err := lifecycle.Reprocess(ctx, st, "intake", d, "client:acme")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err), "a document still being worked on")

	d = move(t, st, d, document.StateProcessedIgnored)
	d = move(t, st, d, document.StateFinishedIgnored)
	got, err := lifecycle.Reprocess(ctx, st, "intake", d, "client:acme")
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
	require.Equal(t, "client:acme", lastEvent(t, st, got).Actor)
	require.Equal(t, []store.OutboxRow{{Subject: "intake.process.acme", MsgID: d.LogID + ":process:2"}}, drain(t, st))
}
