package processor

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/store"
)

// Reprocessable are the states a document can be reprocessed from: every
// finished state and dlq.
var Reprocessable = []document.State{document.StateFinishedSuccess, document.StateFinishedRejected,
	document.StateFinishedIgnored, document.StateFinishedWithFailure, document.StateDLQ}

// Reprocess runs the document with logID again with the current template
// version: a new attempt (the processor pins the version current when it
// starts), a new outcome delivered under a new webhook-id, the earlier
// attempts kept. who is the actor of the event (operator:NAME, client:ID).
// Returns ENOTFOUND for an unknown log id and ECONFLICT for a document that
// is not finished or in dlq (it is still being worked on).
func Reprocess(ctx context.Context, st *store.Store, subjectPrefix, logID, who string) (document.Document, error) {
	d, err := st.DocumentByLogIDAnyClient(ctx, logID)
	if err != nil {
		return d, err
	}
	return ReprocessDocument(ctx, st, subjectPrefix, d, who)
}

// ReprocessDocument is Reprocess for a document already read.
func ReprocessDocument(ctx context.Context, st *store.Store, subjectPrefix string, d document.Document, who string) (document.Document, error) {
	if !document.CanTransition(d.State, document.StateReceived) {
		return d, document.Errorf(document.ECONFLICT, "document %s is %s: only finished or dlq documents can be reprocessed", d.LogID, d.State)
	}
	reason := document.Reason("")
	return st.Reprocess(ctx, store.Change{DocumentID: d.ID, From: d.State, To: document.StateReceived, Reason: &reason,
		Actor: who, Detail: "reprocessed with the current template version"}, processJob(subjectPrefix))
}

// processJob builds the process job of a (re)queued document.
func processJob(subjectPrefix string) func(d document.Document, seq int) store.OutboxRow {
	return func(d document.Document, seq int) store.OutboxRow {
		m := jobs.Process(subjectPrefix, d, seq, time.Now())
		return store.OutboxRow{Subject: m.Subject, MsgID: m.MsgID, Payload: m.Payload}
	}
}
