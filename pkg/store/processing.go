package store

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// Processing is the processor's bookkeeping of one document (see migration
// 00002): which process job is current and how often the document failed
// or was deferred since it was last (re)queued.
type Processing struct {
	// ProcessSeq is the attempt number of the newest process job; older
	// jobs are stale copies.
	ProcessSeq int
	// Failures counts failed attempts (unreadable PDF, deadline, crash).
	Failures int
	// Deferrals counts deferrals for a missing mapping.
	Deferrals int
	// RetryAt is when a deferred document is due again (nil otherwise).
	RetryAt *time.Time
	// Attempt is the document's processing attempt (see CurrentAttempt);
	// ProcessingDocument fills it, Processing leaves it 0.
	Attempt int
}

// ProcessingDocument returns a document with its bookkeeping and current
// attempt in one read: what a processor needs to decide about a job.
// Returns ENOTFOUND for an unknown id.
func (s *Store) ProcessingDocument(ctx context.Context, documentID string) (document.Document, Processing, error) {
	var p Processing
	row := s.db.QueryRow(ctx, `SELECT `+documentColumns+`, process_seq, failures, deferrals, retry_at, attempt
		FROM documents WHERE id = $1`, documentID)
	d, err := scanDocument(scanFunc(func(dest ...any) error {
		return row.Scan(append(dest, &p.ProcessSeq, &p.Failures, &p.Deferrals, &p.RetryAt, &p.Attempt)...)
	}))
	if err != nil {
		return d, p, notFound(err, "document %s not found", documentID)
	}
	return d, p, nil
}

// scanFunc is a pgx.Row that scans with a function (to extend a row's
// destinations).
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// Processing returns a document's bookkeeping. Returns ENOTFOUND for an
// unknown id.
func (s *Store) Processing(ctx context.Context, documentID string) (Processing, error) {
	var p Processing
	err := s.db.QueryRow(ctx, `SELECT process_seq, failures, deferrals, retry_at FROM documents WHERE id = $1`,
		documentID).Scan(&p.ProcessSeq, &p.Failures, &p.Deferrals, &p.RetryAt)
	if err != nil {
		return p, notFound(err, "document %s not found", documentID)
	}
	return p, nil
}

// RecordFailure counts a failed attempt of a document that is still in
// state and appends an event with detail (the error), in one transaction.
// It returns the failures counted so far. Returns ECONFLICT when the
// document has left state meanwhile (another worker finished it).
func (s *Store) RecordFailure(ctx context.Context, documentID string, state document.State, actor, detail string) (int, error) {
	var n int
	err := s.WithTx(ctx, func(tx *Store) error {
		err := tx.db.QueryRow(ctx, `UPDATE documents SET failures = failures + 1 WHERE id = $1 AND state = $2
			RETURNING failures`, documentID, state).Scan(&n)
		if err == pgx.ErrNoRows {
			return document.Errorf(document.ECONFLICT, "document %s is no longer %s", documentID, state)
		}
		if err != nil {
			return translate(err, "record failure")
		}
		return tx.appendEvent(ctx, documentID, state, state, "", actor, detail)
	})
	return n, err
}

// Deferral is the extra bookkeeping of TransitionDeferred.
type Deferral struct {
	// RetryAt is when the document is due again.
	RetryAt time.Time
}

// TransitionDeferred applies c (normally → deferred_for_retry) like
// Transition and, in the same transaction, counts a deferral and sets
// retry_at. Errors as Transition.
func (s *Store) TransitionDeferred(ctx context.Context, c Change, d Deferral) (document.Document, error) {
	var out document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		doc, err := tx.Transition(ctx, c)
		if err != nil {
			return err
		}
		if _, err := tx.db.Exec(ctx, `UPDATE documents SET deferrals = deferrals + 1, retry_at = $2 WHERE id = $1`,
			c.DocumentID, d.RetryAt); err != nil {
			return translate(err, "count deferral")
		}
		out = doc
		return nil
	})
	return out, err
}

// Requeue moves a document from c.From to c.To (an operator's dlq →
// received) with the next process job: it locks the row, calls job with the
// document and the new attempt number (process_seq + 1), applies c with that
// outbox row added, stores the new process_seq and resets failures,
// deferrals and retry_at, all in one transaction. Errors as Transition.
func (s *Store) Requeue(ctx context.Context, c Change, job func(d document.Document, seq int) OutboxRow) (document.Document, error) {
	var out document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		d, seq, err := tx.lockForEnqueue(ctx, c.DocumentID)
		if err != nil {
			return err
		}
		c.Outbox = append(c.Outbox, job(d, seq+1))
		if out, err = tx.Transition(ctx, c); err != nil {
			return err
		}
		_, err = tx.db.Exec(ctx, `UPDATE documents SET process_seq = $2, failures = 0, deferrals = 0, retry_at = NULL
			WHERE id = $1`, c.DocumentID, seq+1)
		return translate(err, "requeue")
	})
	return out, err
}

// lockForEnqueue locks a document row for the rest of the transaction and
// returns it with its process_seq.
func (s *Store) lockForEnqueue(ctx context.Context, id string) (document.Document, int, error) {
	var seq int
	if err := s.db.QueryRow(ctx, `SELECT process_seq FROM documents WHERE id = $1 FOR UPDATE`, id).Scan(&seq); err != nil {
		return document.Document{}, 0, notFound(err, "document %s not found", id)
	}
	d, err := s.Document(ctx, id)
	return d, seq, err
}

// DocumentsInState lists up to limit documents in state, oldest change
// first (for `intakectl dlq list` and requeue --all).
func (s *Store) DocumentsInState(ctx context.Context, state document.State, limit int) ([]document.Document, error) {
	return s.queryDocuments(ctx, "list documents", `SELECT `+documentColumns+` FROM documents WHERE state = $1
		ORDER BY updated_at, id LIMIT $2`, state, limit)
}

// CountByState counts documents per state (states without documents are
// absent), for the documents-by-state gauge.
func (s *Store) CountByState(ctx context.Context) (map[document.State]int, error) {
	return s.OpsStateCounts(ctx, nil)
}

// OldestCreated returns the creation time of the oldest document in state;
// ok is false when there is none.
func (s *Store) OldestCreated(ctx context.Context, state document.State) (t time.Time, ok bool, err error) {
	var at *time.Time
	if err := s.db.QueryRow(ctx, `SELECT min(created_at) FROM documents WHERE state = $1`, state).Scan(&at); err != nil {
		return time.Time{}, false, translate(err, "oldest document")
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return *at, true, nil
}
