package store

import (
	"context"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
)

// awaitingDelivery are the states whose deliver job the dispatcher records
// (document.State.AwaitsDelivery).
var awaitingDelivery = statesWhere(document.State.AwaitsDelivery)

// undeliveredQuery selects documents whose deliver job was lost (see
// SweepUndelivered).
func undeliveredQuery(before time.Time, job func(d document.Document) OutboxRow) sweepQuery {
	return sweepQuery{
		what: "undelivered",
		// A document held for review has no deliver job on purpose
		// (review_until; see review.go): its release queues one.
		where: `d.state = ANY($2::text[]) AND d.updated_at < $3 AND d.review_until IS NULL
			AND NOT EXISTS (SELECT 1 FROM deliveries v WHERE v.document_id = d.id)`,
		args:       []any{awaitingDelivery, before},
		skipColumn: "d.id::text",
		sweep: func(ctx context.Context, tx *Store, d document.Document) (string, error) {
			if err := tx.AddOutbox(ctx, job(d)); err != nil {
				return "", err
			}
			if _, err := tx.db.Exec(ctx, `UPDATE documents SET updated_at = now() WHERE id = $1`, d.ID); err != nil {
				return "", translate(err, "sweep undelivered document")
			}
			return fmt.Sprintf("deliver job re-enqueued (no delivery since %s)", d.UpdatedAt.UTC().Format(time.RFC3339)), nil
		},
	}
}

// SweepUndelivered re-enqueues deliver jobs that were lost before the
// dispatcher recorded their delivery: documents waiting in a state the
// dispatcher reports (processed_*, dlq) since before before, with no
// delivery row at all and not in skip (documents whose deliver job is still
// in the broker). For each, job's outbox row and an event are written and
// updated_at is reset, so the document is not swept again before the next
// deadline (by then its delivery row exists, or its job is in the broker).
// At most limit documents (default 100) per call; see sweepDocs.
//
// Without this a lost deliver job left the document unreported until an
// operator ran redeliver.
func (s *Store) SweepUndelivered(ctx context.Context, before time.Time, skip []string, limit int, actor string,
	job func(d document.Document) OutboxRow) ([]document.Document, error) {
	return s.sweepDocs(ctx, undeliveredQuery(before, job), skip, limit, actor)
}

// HasUndelivered reports whether SweepUndelivered would find candidates,
// before the skip list.
func (s *Store) HasUndelivered(ctx context.Context, before time.Time) (bool, error) {
	return s.hasCandidates(ctx, undeliveredQuery(before, nil))
}

// nonNil turns a nil slice into an empty one: pgx sends nil as NULL, and
// "x = ANY(NULL)" is NULL, which NOT would not make true.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
