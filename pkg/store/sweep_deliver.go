package store

import (
	"context"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
)

// awaitingDelivery are the states whose deliver job the dispatcher records
// (document.State.AwaitsDelivery).
var awaitingDelivery = func() []string {
	var out []string
	for _, s := range document.States {
		if s.AwaitsDelivery() {
			out = append(out, string(s))
		}
	}
	return out
}()

// SweepUndelivered re-enqueues deliver jobs that were lost before the
// dispatcher recorded their delivery: documents waiting in a state the
// dispatcher reports (processed_*, dlq) since before before, with no
// delivery row at all and not in skip (documents whose deliver job is still
// in the broker). Rows are claimed with FOR UPDATE SKIP LOCKED, so replicas
// never take the same document; for each, job's outbox row and an event are
// written and updated_at is reset, so the document is not swept again
// before the next deadline (by then its delivery row exists, or its job is
// in the broker). At most limit documents (default 100) per call.
//
// Without this a lost deliver job left the document unreported until an
// operator ran redeliver.
func (s *Store) SweepUndelivered(ctx context.Context, before time.Time, skip []string, limit int, actor string,
	job func(d document.Document) OutboxRow) ([]document.Document, error) {
	if limit <= 0 {
		limit = 100
	}
	var out []document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		rows, err := tx.db.Query(ctx, `SELECT d.id::text FROM documents d
			WHERE d.state = ANY($1::text[]) AND d.updated_at < $2
			  AND NOT EXISTS (SELECT 1 FROM deliveries v WHERE v.document_id = d.id)
			  AND NOT (d.id::text = ANY($3::text[]))
			ORDER BY d.updated_at LIMIT $4 FOR UPDATE OF d SKIP LOCKED`, awaitingDelivery, before, nonNil(skip), limit)
		if err != nil {
			return translate(err, "claim undelivered documents")
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return translate(err, "scan undelivered document")
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err, "claim undelivered documents")
		}
		for _, id := range ids {
			d, err := tx.Document(ctx, id)
			if err != nil {
				return err
			}
			if err := tx.AddOutbox(ctx, job(d)); err != nil {
				return err
			}
			if _, err := tx.db.Exec(ctx, `UPDATE documents SET updated_at = now() WHERE id = $1`, id); err != nil {
				return translate(err, "sweep undelivered document")
			}
			detail := fmt.Sprintf("deliver job re-enqueued (no delivery since %s)", d.UpdatedAt.UTC().Format(time.RFC3339))
			if err := tx.appendEvent(ctx, d.ID, d.State, d.State, "", actor, detail); err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// nonNil turns a nil slice into an empty one: pgx sends nil as NULL, and
// "x = ANY(NULL)" is NULL, which NOT would not make true.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
