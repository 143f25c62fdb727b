package store

import (
	"context"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
)

// SweepOptions select the documents SweepStuck re-enqueues.
type SweepOptions struct {
	// ReceivedBefore: documents in received whose state has not moved (and
	// that were not swept) since before this time.
	ReceivedBefore time.Time
	// DueBefore: documents in deferred_for_retry whose retry_at (or, when
	// unset, last change) is before this time.
	DueBefore time.Time
	// Limit caps the documents of one call. Defaults to 100.
	Limit int
	// Actor is recorded on the events. Defaults to "sweeper".
	Actor string
	// SkipLogIDs are documents whose job is still queued in the broker:
	// they are late, not lost, and are left alone.
	SkipLogIDs []string
}

// SweepStuck re-enqueues documents whose process job was lost: it claims
// matching rows with FOR UPDATE SKIP LOCKED (so sweepers of several
// replicas never take the same document and never wait for each other),
// and for each increments process_seq, writes the outbox row job returns for
// the new attempt number, appends an event and resets updated_at (received)
// or retry_at (deferred) so that the document is not swept again before its
// next deadline, all in one transaction. It returns the swept documents.
//
// The new job supersedes the old one: a worker that receives a job with a
// lower attempt number than process_seq drops it, so a job that was only
// late, not lost, does no harm.
func (s *Store) SweepStuck(ctx context.Context, o SweepOptions, job func(d document.Document, seq int) OutboxRow) ([]document.Document, error) {
	if o.Limit <= 0 {
		o.Limit = 100
	}
	if o.Actor == "" {
		o.Actor = "sweeper"
	}
	var out []document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		rows, err := tx.db.Query(ctx, `SELECT id::text, process_seq FROM documents
			WHERE ((state = $1 AND updated_at < $2)
			   OR (state = $3 AND coalesce(retry_at, updated_at) < $4))
			  AND NOT (log_id = ANY($6::text[]))
			ORDER BY updated_at LIMIT $5 FOR UPDATE SKIP LOCKED`,
			document.StateReceived, o.ReceivedBefore, document.StateDeferredForRetry, o.DueBefore, o.Limit, nonNil(o.SkipLogIDs))
		if err != nil {
			return translate(err, "claim stuck documents")
		}
		type claim struct {
			id  string
			seq int
		}
		var claims []claim
		for rows.Next() {
			var c claim
			if err := rows.Scan(&c.id, &c.seq); err != nil {
				rows.Close()
				return translate(err, "scan stuck document")
			}
			claims = append(claims, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err, "claim stuck documents")
		}
		for _, c := range claims {
			d, err := tx.Document(ctx, c.id)
			if err != nil {
				return err
			}
			if err := tx.AddOutbox(ctx, job(d, c.seq+1)); err != nil {
				return err
			}
			// updated_at moves for received documents only: for deferred
			// ones it still tells when the state last changed. Their
			// retry_at becomes now, so either way a second sweep waits for
			// the full grace period again.
			if _, err := tx.db.Exec(ctx, `UPDATE documents SET process_seq = $2,
					updated_at = CASE WHEN state = $3 THEN now() ELSE updated_at END,
					retry_at = CASE WHEN state = $3 THEN retry_at ELSE now() END
				WHERE id = $1`, c.id, c.seq+1, document.StateReceived); err != nil {
				return translate(err, "sweep document")
			}
			detail := fmt.Sprintf("re-enqueued as process job %d (no outcome since %s)", c.seq+1, d.UpdatedAt.UTC().Format(time.RFC3339))
			if err := tx.appendEvent(ctx, d.ID, d.State, d.State, "", o.Actor, detail); err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}
