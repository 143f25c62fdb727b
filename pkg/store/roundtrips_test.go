package store_test

import (
	"context"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// Transition writes its event and every outbox row (payload and headers
// intact, in the order given) with the state in one statement, and a lost
// compare-and-set writes none of them.
func TestTransitionWritesEventAndOutboxTogether(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m", "x")
	job.Headers = map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	_, created, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	require.True(t, created)

	rows := []store.OutboxRow{
		{Subject: "intake.deliver.acme", MsgID: d.LogID + ":a", Payload: []byte("first"), Headers: map[string]string{"k": "v"}},
		{Subject: "intake.deliver.acme", MsgID: d.LogID + ":b"}, // empty payload, no headers
	}
	got, err := s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateProcessedRejected,
		Reason: ptr(document.ReasonNotAnOrder), Actor: "processor", Detail: "no order number", Outbox: rows})
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedRejected, got.State)
	require.Equal(t, document.ReasonNotAnOrder, got.StatusReason)

	// Lost compare-and-set: ECONFLICT, and neither event nor outbox row.
	_, err = s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateDLQ, Actor: "x",
		Outbox: []store.OutboxRow{{Subject: "intake.deliver.acme", MsgID: d.LogID + ":lost"}}})
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	// An outbox row without subject is refused before anything is written.
	_, err = s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateProcessedRejected, To: document.StateSentRejected,
		Actor: "x", Outbox: []store.OutboxRow{{MsgID: "no-subject"}}})
	require.Error(t, err)

	ev, err := s.Events(ctx, d.ID)
	require.NoError(t, err)
	require.Len(t, ev, 2)
	require.Equal(t, document.State(""), ev[0].From)
	require.Equal(t, document.StateReceived, ev[0].To)
	require.Equal(t, "ingest", ev[0].Actor)
	require.Equal(t, document.StateReceived, ev[1].From)
	require.Equal(t, document.StateProcessedRejected, ev[1].To)
	require.Equal(t, document.ReasonNotAnOrder, ev[1].Reason)
	require.Equal(t, "processor", ev[1].Actor)
	require.Equal(t, "no order number", ev[1].Detail)

	var seen []store.OutboxRow
	n, err := s.RelayOutbox(ctx, 10, 0, func(_ context.Context, batch []store.OutboxRow) []error {
		seen = append(seen, batch...)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, []string{job.MsgID, d.LogID + ":a", d.LogID + ":b"}, []string{seen[0].MsgID, seen[1].MsgID, seen[2].MsgID})
	require.Equal(t, job.Headers, seen[0].Headers)
	require.Equal(t, job.Payload, seen[0].Payload)
	require.Equal(t, []byte("first"), seen[1].Payload)
	require.Equal(t, map[string]string{"k": "v"}, seen[1].Headers)
	require.Empty(t, seen[2].Payload)
	require.Empty(t, seen[2].Headers)
}

// The workers' combined reads return what the separate ones do.
func TestCombinedReads(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m", "x")
	_, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	require.NoError(t, s.UpsertClient(ctx, document.Client{ID: "acme", Name: "ACME", WebhookURL: "https://acme.example/hook",
		WebhookToken: "wt", SigningSecret: "whsec_c2VjcmV0"}))

	doc, pr, err := s.ProcessingDocument(ctx, d.ID)
	require.NoError(t, err)
	want, err := s.Document(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, want, doc)
	wantPr, err := s.Processing(ctx, d.ID)
	require.NoError(t, err)
	n, err := s.CurrentAttempt(ctx, d.ID)
	require.NoError(t, err)
	wantPr.Attempt = n
	require.Equal(t, wantPr, pr)

	doc, cl, err := s.DocumentWithClient(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, want, doc)
	wantCl, err := s.Client(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, wantCl, cl)
	require.Equal(t, "https://acme.example/hook", cl.WebhookURL)

	_, _, err = s.ProcessingDocument(ctx, "0190c0de-0000-7000-8000-000000000000")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
	_, _, err = s.DocumentWithClient(ctx, "0190c0de-0000-7000-8000-000000000000")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
}
