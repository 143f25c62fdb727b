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

// sweepQuery is one kind of sweep: which documents are candidates, and
// what sweeping one of them writes besides its event.
type sweepQuery struct {
	what string // for errors
	// where selects candidates among documents d; its arguments are args,
	// numbered from $2 ($1 is the skip list).
	where string
	args  []any
	// skipColumn is compared with the skip list ("d.log_id", "d.id::text").
	skipColumn string
	// sweep writes the new job and moves the document's deadline, so that
	// it is not swept again before the next one; it returns the event
	// detail.
	sweep func(ctx context.Context, tx *Store, d document.Document) (string, error)
}

// hasCandidates reports whether any document matches q, skip list aside:
// a cheap check (no locks) that lets the sweeper leave the broker alone
// when PostgreSQL has nothing to sweep.
func (s *Store) hasCandidates(ctx context.Context, q sweepQuery) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM documents d WHERE (`+q.where+`)
		AND NOT (`+q.skipColumn+` = ANY($1::text[])))`, append([]any{[]string{}}, q.args...)...).Scan(&ok)
	if err != nil {
		return false, translate(err, "look for "+q.what+" documents")
	}
	return ok, nil
}

// sweepDocs claims at most limit documents matching q and not in skip with
// FOR UPDATE SKIP LOCKED (so sweepers of several replicas never take the
// same document and never wait for each other) and sweeps each in the same
// transaction, with an event by actor. It returns the swept documents.
func (s *Store) sweepDocs(ctx context.Context, q sweepQuery, skip []string, limit int, actor string) ([]document.Document, error) {
	if limit <= 0 {
		limit = 100
	}
	if actor == "" {
		actor = "sweeper"
	}
	var out []document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		rows, err := tx.db.Query(ctx, fmt.Sprintf(`SELECT d.id::text FROM documents d
			WHERE (%s) AND NOT (%s = ANY($1::text[]))
			ORDER BY d.updated_at LIMIT %d FOR UPDATE OF d SKIP LOCKED`, q.where, q.skipColumn, limit),
			append([]any{nonNil(skip)}, q.args...)...)
		if err != nil {
			return translate(err, "claim "+q.what+" documents")
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return translate(err, "scan "+q.what+" document")
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err, "claim "+q.what+" documents")
		}
		for _, id := range ids {
			d, err := tx.Document(ctx, id)
			if err != nil {
				return err
			}
			detail, err := q.sweep(ctx, tx, d)
			if err != nil {
				return err
			}
			if err := tx.appendEvent(ctx, d.ID, d.State, d.State, "", actor, detail); err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// stuckQuery selects documents whose process job was lost (see SweepStuck).
func stuckQuery(o SweepOptions, job func(d document.Document, seq int) OutboxRow) sweepQuery {
	return sweepQuery{
		what: "stuck",
		where: `(d.state = $2 AND d.updated_at < $3)
			OR (d.state = $4 AND coalesce(d.retry_at, d.updated_at) < $5)`,
		args:       []any{document.StateReceived, o.ReceivedBefore, document.StateDeferredForRetry, o.DueBefore},
		skipColumn: "d.log_id",
		sweep: func(ctx context.Context, tx *Store, d document.Document) (string, error) {
			seq, err := tx.enqueueAgain(ctx, d, job)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("re-enqueued as process job %d (no outcome since %s)", seq, d.UpdatedAt.UTC().Format(time.RFC3339)), nil
		},
	}
}

// enqueueAgain gives a document in received or deferred_for_retry the next
// process job (process_seq + 1, the outbox row job returns), which
// supersedes the one before, and returns its number.
func (s *Store) enqueueAgain(ctx context.Context, d document.Document, job func(d document.Document, seq int) OutboxRow) (int, error) {
	// updated_at moves for received documents only: for deferred ones it
	// still tells when the state last changed. Their retry_at becomes now,
	// so either way a second sweep waits for the full grace period again.
	var seq int
	if err := s.db.QueryRow(ctx, `UPDATE documents SET process_seq = process_seq + 1,
			updated_at = CASE WHEN state = $2 THEN now() ELSE updated_at END,
			retry_at = CASE WHEN state = $2 THEN retry_at ELSE now() END
		WHERE id = $1 RETURNING process_seq`, d.ID, document.StateReceived).Scan(&seq); err != nil {
		return 0, translate(err, "sweep document")
	}
	return seq, s.AddOutbox(ctx, job(d, seq))
}

// SweepStuck re-enqueues documents whose process job was lost: documents
// in received whose state has not moved since o.ReceivedBefore and
// deferred documents whose retry is due since o.DueBefore, except
// o.SkipLogIDs. For each it increments process_seq, writes the outbox row
// job returns for the new attempt number, appends an event and resets
// updated_at (received) or retry_at (deferred), all in one transaction
// (see sweepDocs). It returns the swept documents.
//
// The new job supersedes the old one: a worker that receives a job with a
// lower attempt number than process_seq drops it, so a job that was only
// late, not lost, does no harm.
func (s *Store) SweepStuck(ctx context.Context, o SweepOptions, job func(d document.Document, seq int) OutboxRow) ([]document.Document, error) {
	return s.sweepDocs(ctx, stuckQuery(o, job), o.SkipLogIDs, o.Limit, o.Actor)
}

// HasStuck reports whether SweepStuck would find candidates, before the
// skip list: without any, the broker need not be read for one.
func (s *Store) HasStuck(ctx context.Context, o SweepOptions) (bool, error) {
	return s.hasCandidates(ctx, stuckQuery(o, nil))
}
