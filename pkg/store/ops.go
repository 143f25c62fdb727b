package store

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// OpsDocument is a document as the ops console and `intakectl status` list
// it: the row plus the newest error text of its history, so a DLQ entry says
// why it is there without opening it.
type OpsDocument struct {
	document.Document
	// LastError is the detail of the newest event that has one (the error
	// of the failed attempt, the missing mapping, …); empty when none.
	LastError string
}

// OpsDocuments lists up to limit documents in state, most recently changed
// first (the DLQ view).
func (s *Store) OpsDocuments(ctx context.Context, state document.State, limit int) ([]OpsDocument, error) {
	return s.OpsDocumentsOf(ctx, nil, state, limit)
}

// withExtra scans the document columns followed by extra columns, so
// scanDocument stays the one place that knows the document column order.
type withExtra struct {
	row   pgx.Row
	extra []any
}

func (w withExtra) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra...)...) }

// OpsSummary is the database half of the system's status: what the ops
// console's front page and `intakectl status` show next to the queue
// counters.
type OpsSummary struct {
	// States counts documents per state (states without documents are
	// absent).
	States map[document.State]int
	// OutboxUnsent counts outbox rows not yet published, and OutboxOldest
	// is when the oldest of them was written (zero when none): a growing
	// number means no relay is running or the broker refuses publishes.
	OutboxUnsent int
	OutboxOldest time.Time
	// OldestReceived is when the oldest document still in received was
	// uploaded (zero when none).
	OldestReceived time.Time
	// Deliveries is the webhook backlog.
	Deliveries DeliveryBacklog
	// At is the database's clock when the summary was read, so ages
	// computed from it do not depend on the caller's clock.
	At time.Time
}

// OpsSummary reads the summary (one transaction, so the numbers are read
// close together; each statement sees its own snapshot).
func (s *Store) OpsSummary(ctx context.Context) (OpsSummary, error) {
	var sum OpsSummary
	err := s.WithTx(ctx, func(tx *Store) error {
		var err error
		if sum.States, err = tx.CountByState(ctx); err != nil {
			return err
		}
		if sum.OutboxUnsent, sum.OutboxOldest, sum.At, err = tx.OutboxBacklog(ctx); err != nil {
			return err
		}
		var received *time.Time
		if err := tx.db.QueryRow(ctx, `SELECT min(created_at) FROM documents WHERE state = $1`, document.StateReceived).Scan(&received); err != nil {
			return translate(err, "ops summary")
		}
		if received != nil {
			sum.OldestReceived = *received
		}
		sum.Deliveries, err = tx.DeliveryBacklog(ctx)
		return err
	})
	return sum, err
}

// OpsRecentDocuments lists the limit most recently changed documents of any
// state (the console's "recent activity").
func (s *Store) OpsRecentDocuments(ctx context.Context, limit int) ([]document.Document, error) {
	return s.OpsRecentDocumentsOf(ctx, nil, limit)
}

// OutboxBacklog counts unpublished outbox rows and returns when the oldest
// was written (zero when none) and the database's clock.
func (s *Store) OutboxBacklog(ctx context.Context) (n int, oldest, now time.Time, err error) {
	var at *time.Time
	if err := s.db.QueryRow(ctx, `SELECT count(*), min(created_at), now() FROM outbox WHERE sent_at IS NULL`).
		Scan(&n, &at, &now); err != nil {
		return 0, time.Time{}, time.Time{}, translate(err, "outbox backlog")
	}
	if at != nil {
		oldest = *at
	}
	return n, oldest, now, nil
}
