package system

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/store"
)

// Operator actions on one document, for the ops console (and any other
// operator front end). Each is one store transaction with its outbox row,
// so a running relay publishes the job; a document that has moved on
// meanwhile gives ECONFLICT, an unknown one ENOTFOUND. who names the
// operator on the document's event ("operator:<name>").

// RequeueDocument moves a document from dlq back to received with the next
// process job (attempt process_seq+1, built with jobs.Process) and resets
// its failure and deferral counts, so it gets the full retry schedule again.
func RequeueDocument(ctx context.Context, st *store.Store, subjectPrefix string, d document.Document, who string) (document.Document, error) {
	clear := document.Reason("")
	return st.Requeue(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ, To: document.StateReceived,
		Reason: &clear, Actor: who, Detail: "re-queued by an operator"},
		func(d document.Document, seq int) store.OutboxRow {
			return outboxRow(jobs.Process(subjectPrefix, d, seq, time.Now()))
		})
}

// RedeliverDocument queues a new webhook delivery, under a new webhook-id,
// of the document's last reported outcome (or of its current state when it
// never had one) and returns the new delivery id. A document in a state
// without a webhook status (received, sent_*, …) gives EINVALID.
func RedeliverDocument(ctx context.Context, st *store.Store, subjectPrefix string, d document.Document, who string) (string, error) {
	reported, err := st.LastReportedState(ctx, d.ID)
	if document.ErrorKind(err) == document.ENOTFOUND {
		reported, err = d.State, nil
	}
	if err != nil {
		return "", err
	}
	status, ok := document.StatusFor(reported)
	if !ok {
		return "", document.Errorf(document.EINVALID, "document %s is %s: nothing to deliver yet", d.LogID, d.State)
	}
	var prev string
	if dels, err := st.Deliveries(ctx, d.ID); err == nil && len(dels) > 0 {
		prev = dels[len(dels)-1].ID
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("delivery id: %w", err)
	}
	id := "msg_" + hex.EncodeToString(rnd[:])
	as := d
	as.State = reported
	err = st.CreateRedelivery(ctx, store.Redelivery{
		Delivery: store.Delivery{ID: id, DocumentID: d.ID, ClientID: d.ClientID, LogID: d.LogID, State: reported,
			Status: status, RedeliveryOf: prev},
		Job: outboxRow(jobs.Deliver(subjectPrefix, as, id, time.Now())),
	}, who, 2*time.Minute)
	return id, err
}

// GiveUpDocument moves a document from dlq to finished_with_failure. The
// client was told status failed when it entered dlq; no second webhook.
func GiveUpDocument(ctx context.Context, st *store.Store, d document.Document, who string) (document.Document, error) {
	return st.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ,
		To: document.StateFinishedWithFailure, Actor: who, Detail: "given up by an operator"})
}

func outboxRow(m jobs.Message) store.OutboxRow {
	return store.OutboxRow{Subject: m.Subject, MsgID: m.MsgID, Payload: m.Payload}
}
