// Package lifecycle owns the document state changes that are decided outside
// the pipeline's own handlers: the operator actions (requeue, give up,
// redeliver, reprocess) and the pieces every state change with a job shares
// (the outbox row of a job, the webhook-id of a new delivery). The services,
// the ops console and intakectl call it; none of them builds these changes
// itself.
//
// Each action is one store transaction that writes the document's event and,
// where a job follows, its outbox row, so a running relay publishes the job.
// A document that moved on meanwhile gives ECONFLICT, an unknown one
// ENOTFOUND. who names the actor on the document's event ("operator:NAME",
// "client:ID").
package lifecycle

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/google/uuid"
)

// NewDeliveryID returns a new webhook-id: "msg_" and a random UUID. Every
// delivery (first, sweeper's, operator's redelivery) gets its id here.
func NewDeliveryID() string { return "msg_" + uuid.NewString() }

// Outbox is the outbox row of job m. It carries ctx's trace context (nil when
// ctx has none) for the relay to publish as NATS headers, so the consumer's
// span joins the trace that caused the job.
func Outbox(ctx context.Context, m jobs.Message) store.OutboxRow {
	m.Headers = observability.TraceHeaders(ctx)
	return m
}

// ProcessJob is the outbox row of attempt n of d's process job.
func ProcessJob(ctx context.Context, prefix string, d document.Document, n int) store.OutboxRow {
	return Outbox(ctx, jobs.Process(prefix, d, n, time.Now()))
}

// DeliverJob is the outbox row of a delivery of d's current state under
// deliveryID.
func DeliverJob(ctx context.Context, prefix string, d document.Document, deliveryID string) store.OutboxRow {
	return Outbox(ctx, jobs.Deliver(prefix, d, deliveryID, time.Now()))
}

// Requeue moves a document from dlq back to received with the next process
// job (attempt process_seq+1) and resets its failure and deferral counts, so
// it gets the full retry schedule again. prefix is INTAKE_SUBJECT_PREFIX.
func Requeue(ctx context.Context, st *store.Store, prefix string, d document.Document, who string) (document.Document, error) {
	clear := document.Reason("")
	return st.Requeue(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ, To: document.StateReceived,
		Reason: &clear, Actor: who, Detail: "re-queued by an operator"},
		func(d document.Document, seq int) store.OutboxRow { return ProcessJob(ctx, prefix, d, seq) })
}

// GiveUp moves a document from dlq to finished_with_failure. The client was
// told status failed when it entered dlq; no second webhook.
func GiveUp(ctx context.Context, st *store.Store, d document.Document, who string) (document.Document, error) {
	return st.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ,
		To: document.StateFinishedWithFailure, Actor: who, Detail: "given up by an operator"})
}

// Redeliver queues a new webhook delivery, under a new webhook-id, of the
// document's last reported outcome (or of its current state when it never
// had one) and returns the new delivery id. A document in a state without a
// webhook status (received, sent_*, …) gives EINVALID.
func Redeliver(ctx context.Context, st *store.Store, prefix string, d document.Document, who string) (string, error) {
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
	id := NewDeliveryID()
	as := d
	as.State = reported
	err = st.CreateRedelivery(ctx, store.Redelivery{
		Delivery: store.Delivery{ID: id, DocumentID: d.ID, ClientID: d.ClientID, LogID: d.LogID, State: reported,
			Status: status, RedeliveryOf: prev},
		Job: DeliverJob(ctx, prefix, as, id),
	}, who, 2*time.Minute)
	return id, err
}

// Reprocess runs a document again with the current template version: back
// to received as a new attempt (the processor pins the version current when
// it starts), with the next process job, its counters reset; the new outcome
// is delivered under a new webhook-id and the earlier attempts, events and
// deliveries stay. Returns ECONFLICT for a document that is not finished or
// in dlq (it is still being worked on), or that moved meanwhile.
func Reprocess(ctx context.Context, st *store.Store, prefix string, d document.Document, who string) (document.Document, error) {
	if !document.CanTransition(d.State, document.StateReceived) {
		return d, document.Errorf(document.ECONFLICT, "document %s is %s: only finished or dlq documents can be reprocessed", d.LogID, d.State)
	}
	clear := document.Reason("")
	return st.Reprocess(ctx, store.Change{DocumentID: d.ID, From: d.State, To: document.StateReceived, Reason: &clear,
		Actor: who, Detail: "reprocessed with the current template version"},
		func(d document.Document, seq int) store.OutboxRow { return ProcessJob(ctx, prefix, d, seq) })
}
