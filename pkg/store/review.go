package store

import (
	"context"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// A document held for review (issue 27) rests in processed_rejected with
// documents.review_until set and no deliver job: the lost-deliver-job sweep
// leaves it alone (undeliveredQuery), and exactly one of an operator's
// release, an operator's approval and the review timeout ends the hold:
// each clears review_until with a compare-and-set first (releaseHold), so
// the others then find nothing held.

// HoldForReview applies c (normally → processed_rejected, without outbox
// rows) like Transition and, in the same transaction, marks the document
// held until until. Errors as Transition.
func (s *Store) HoldForReview(ctx context.Context, c Change, until time.Time) (document.Document, error) {
	var out document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		d, err := tx.Transition(ctx, c)
		if err != nil {
			return err
		}
		if _, err := tx.db.Exec(ctx, `UPDATE documents SET review_until = $2 WHERE id = $1`, c.DocumentID, until); err != nil {
			return translate(err, "hold for review")
		}
		out = d
		return nil
	})
	return out, err
}

// releaseHold ends a document's hold (compare-and-set on review_until) and
// returns the document. ECONFLICT when it is not held (released, approved
// or timed out meanwhile), ENOTFOUND when it does not exist.
func (s *Store) releaseHold(ctx context.Context, id string) (document.Document, error) {
	var got string
	err := s.db.QueryRow(ctx, `UPDATE documents SET review_until = NULL, updated_at = now()
		WHERE id = $1 AND state = $2 AND review_until IS NOT NULL RETURNING id::text`,
		id, document.StateProcessedRejected).Scan(&got)
	if err == pgx.ErrNoRows {
		cur, err := s.Document(ctx, id)
		if err != nil {
			return cur, err
		}
		return cur, document.CodedErrorf(document.ECONFLICT, "not_held_for_review",
			"document %s is %s and not held for review (released, approved or timed out meanwhile)", cur.LogID, cur.State)
	}
	if err != nil {
		return document.Document{}, translate(err, "release hold")
	}
	return s.Document(ctx, id)
}

// ReleaseReview ends a document's hold and writes job's outbox row (the
// rejection's delivery) and an event by actor, in one transaction. Errors
// as releaseHold.
func (s *Store) ReleaseReview(ctx context.Context, id, actor, detail string, job func(d document.Document) OutboxRow) (document.Document, error) {
	var out document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		d, err := tx.releaseHold(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.AddOutbox(ctx, job(d)); err != nil {
			return err
		}
		out = d
		return tx.appendEvent(ctx, d.ID, d.State, d.State, "", actor, detail)
	})
	return out, err
}

// ApproveReview ends a document's hold and applies the change build
// returns (processed_rejected → processed_success with its results and
// deliver job) in one transaction. build runs while the transaction holds
// the document's row, so it may write the result objects: of two
// concurrent approvals exactly one builds and wins, the other waits for
// the row, then finds nothing held and gets ECONFLICT without writing.
func (s *Store) ApproveReview(ctx context.Context, id string, build func(d document.Document) (Change, error)) (document.Document, error) {
	return s.approveReview(ctx, id, nil, build)
}

// approveReview is ApproveReview with record (nil: none) run in the
// transaction after the hold ended and before build.
func (s *Store) approveReview(ctx context.Context, id string, record func(tx *Store) error,
	build func(d document.Document) (Change, error)) (document.Document, error) {
	var out document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		d, err := tx.releaseHold(ctx, id)
		if err != nil {
			return err
		}
		if record != nil {
			if err := record(tx); err != nil {
				return err
			}
		}
		c, err := build(d)
		if err != nil {
			return err
		}
		c.DocumentID = id
		out, err = tx.Transition(ctx, c)
		return err
	})
	return out, err
}

// ReviewUntil is when a held document's hold ends (ok false when the
// document is not held).
func (s *Store) ReviewUntil(ctx context.Context, id string) (until time.Time, ok bool, err error) {
	var at *time.Time
	if err := s.db.QueryRow(ctx, `SELECT review_until FROM documents WHERE id = $1`, id).Scan(&at); err != nil {
		return time.Time{}, false, notFound(err, "document %s not found", id)
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return *at, true, nil
}

// Held is a document waiting for review.
type Held struct {
	document.Document
	Until time.Time // when the review timeout releases it
}

// ReviewQueue lists the documents held for review, oldest first, of one
// client ("" = all), at most limit (default 100).
func (s *Store) ReviewQueue(ctx context.Context, clientID string, limit int) ([]Held, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.Query(ctx, `SELECT `+documentColumns+`, review_until FROM documents
		WHERE review_until IS NOT NULL AND ($1 = '' OR client_id = $1) ORDER BY updated_at, id LIMIT $2`, clientID, limit)
	if err != nil {
		return nil, translate(err, "review queue")
	}
	defer rows.Close()
	var out []Held
	for rows.Next() {
		var h Held
		if h.Document, err = scanDocument(rows, &h.Until); err != nil {
			return nil, translate(err, "scan review queue")
		}
		out = append(out, h)
	}
	return out, translate(rows.Err(), "review queue")
}

// ReviewBacklog counts the documents held for review and returns since
// when the oldest waits (zero when none).
func (s *Store) ReviewBacklog(ctx context.Context) (n int, oldest time.Time, err error) {
	var at *time.Time
	if err := s.db.QueryRow(ctx, `SELECT count(*), min(updated_at) FROM documents WHERE review_until IS NOT NULL`).
		Scan(&n, &at); err != nil {
		return 0, time.Time{}, translate(err, "review backlog")
	}
	if at != nil {
		oldest = *at
	}
	return n, oldest, nil
}

// reviewTimeoutQuery selects held documents whose review timeout passed
// before now (see SweepReviewTimeouts).
func reviewTimeoutQuery(now time.Time, job func(d document.Document) OutboxRow) sweepQuery {
	return sweepQuery{
		what:       "review timed out",
		where:      `d.state = $2 AND d.review_until < $3`,
		args:       []any{document.StateProcessedRejected, now},
		skipColumn: "d.id::text",
		sweep: func(ctx context.Context, tx *Store, d document.Document) (string, error) {
			if _, err := tx.releaseHold(ctx, d.ID); err != nil {
				return "", err
			}
			if err := tx.AddOutbox(ctx, job(d)); err != nil {
				return "", err
			}
			return fmt.Sprintf("review timeout passed (held since %s): the rejection is delivered",
				d.UpdatedAt.UTC().Format(time.RFC3339)), nil
		},
	}
}

// SweepReviewTimeouts releases held documents whose review_until is before
// now: the hold ends and job's outbox row (the rejection's delivery, as it
// would have been queued without the hold) and an event by actor are
// written, at most limit documents (default 100) per call (see sweepDocs).
func (s *Store) SweepReviewTimeouts(ctx context.Context, now time.Time, limit int, actor string,
	job func(d document.Document) OutboxRow) ([]document.Document, error) {
	return s.sweepDocs(ctx, reviewTimeoutQuery(now, job), nil, limit, actor)
}

// HasReviewTimeouts reports whether SweepReviewTimeouts would find any.
func (s *Store) HasReviewTimeouts(ctx context.Context, now time.Time) (bool, error) {
	return s.hasCandidates(ctx, reviewTimeoutQuery(now, nil))
}
