package store

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/document"
)

// RetryDeferredFor gives every document of clientID deferred for a
// missing mapping whose last deferral's detail contains waitingFor (see
// template.MissingMapping) its next process job now, superseding the job
// that waits for the retry schedule, with an event by actor: the entry it
// waited for was added, so it need not wait for its next retry (nor spend
// a deferral of its schedule on another document's key). Documents
// another transaction holds are left to their schedule. It returns the
// documents given a job.
func (s *Store) RetryDeferredFor(ctx context.Context, clientID, waitingFor, actor string,
	job func(d document.Document, seq int) OutboxRow) ([]document.Document, error) {
	q := sweepQuery{
		what: "deferred for a mapping",
		where: `d.client_id = $2 AND d.state = $3 AND strpos((SELECT e.detail FROM document_events e
			WHERE e.document_id = d.id AND e.to_state = $3 AND e.reason = $4 ORDER BY e.id DESC LIMIT 1), $5) > 0`,
		args:       []any{clientID, document.StateDeferredForRetry, document.ReasonMappingNotResolved, waitingFor},
		skipColumn: "d.log_id",
		sweep: func(ctx context.Context, tx *Store, d document.Document) (string, error) {
			seq, err := tx.enqueueAgain(ctx, d, job)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("the mapping it waited for was added (%s): processed again now as process job %d", waitingFor, seq), nil
		},
	}
	return s.sweepDocs(ctx, q, nil, 1000, actor)
}
