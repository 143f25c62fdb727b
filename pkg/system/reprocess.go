package system

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/store"
)

// ReprocessDocument runs a document again with the current template
// version: back to received as a new attempt (the processor pins the
// version current when it starts), with the next process job, its counters
// reset; the new outcome is delivered under a new webhook-id and the
// earlier attempts, events and deliveries stay. who is the event's actor
// (operator:NAME). Returns ECONFLICT for a document that is not finished or
// in dlq (it is still being worked on), or that moved meanwhile.
func ReprocessDocument(ctx context.Context, st *store.Store, subjectPrefix string, d document.Document, who string) (document.Document, error) {
	if !document.CanTransition(d.State, document.StateReceived) {
		return d, document.Errorf(document.ECONFLICT, "document %s is %s: only finished or dlq documents can be reprocessed", d.LogID, d.State)
	}
	clear := document.Reason("")
	return st.Reprocess(ctx, store.Change{DocumentID: d.ID, From: d.State, To: document.StateReceived, Reason: &clear,
		Actor: who, Detail: "reprocessed with the current template version"},
		func(d document.Document, seq int) store.OutboxRow {
			return outboxRow(jobs.Process(subjectPrefix, d, seq, time.Now()))
		})
}
