package processor

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/store"
)

// Operator actions on documents in dlq, shared by `intakectl dlq` and
// tests. Both are compare-and-set transitions: a document that is no longer
// in dlq gives ECONFLICT, an unknown log id ENOTFOUND.

// Requeue moves the document with logID from dlq back to received with a new
// process job (written to the outbox; any running relay publishes it) and
// resets its failure and deferral counts, so it gets the full retry
// schedule again. subjectPrefix is INTAKE_SUBJECT_PREFIX; who names the
// operator on the event ("operator:<name>").
func Requeue(ctx context.Context, st *store.Store, subjectPrefix, logID, who string) (document.Document, error) {
	d, err := st.DocumentByLogIDAnyClient(ctx, logID)
	if err != nil {
		return d, err
	}
	reason := document.Reason("")
	return st.Requeue(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ, To: document.StateReceived,
		Reason: &reason, Actor: who, Detail: "re-queued by an operator"},
		func(d document.Document, seq int) store.OutboxRow {
			m := jobs.Process(subjectPrefix, d, seq, time.Now())
			return store.OutboxRow{Subject: m.Subject, MsgID: m.MsgID, Payload: m.Payload}
		})
}

// GiveUp moves the document with logID from dlq to finished_with_failure.
// The client was told status failed when the document entered dlq, so no
// second webhook is sent.
func GiveUp(ctx context.Context, st *store.Store, logID, who string) (document.Document, error) {
	d, err := st.DocumentByLogIDAnyClient(ctx, logID)
	if err != nil {
		return d, err
	}
	return st.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateDLQ, To: document.StateFinishedWithFailure,
		Actor: who, Detail: "given up by an operator"})
}
