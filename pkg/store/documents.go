package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/jackc/pgx/v5"
)

// OutboxRow is a message to publish after the transaction that wrote it
// commits: a job (see jobs.Message, the one outbox row type).
type OutboxRow = jobs.Message

const documentColumns = `id::text, log_id, client_id, message_id, file_sha256, file_size, filename, subject, template,
	coalesce(party_id, ''), coalesce(result_mode, ''), document_date, coalesce(source_path, ''), coalesce(result_path, ''),
	coalesce(result_json_path, ''), state, coalesce(status_reason, ''), attempts, created_at, updated_at, source_key,
	coalesce(result_key, ''), coalesce(result_json_key, '')`

// scanDocument scans documentColumns, then extra (columns the statement
// selects after them).
func scanDocument(row pgx.Row, extra ...any) (document.Document, error) {
	var d document.Document
	var mode, state, reason string
	err := row.Scan(append([]any{&d.ID, &d.LogID, &d.ClientID, &d.MessageID, &d.FileSHA256, &d.FileSize, &d.Filename, &d.Subject,
		&d.Template, &d.PartyID, &mode, &d.DocumentDate, &d.SourcePath, &d.ResultPath, &d.ResultJSONPath, &state,
		&reason, &d.Attempts, &d.CreatedAt, &d.UpdatedAt, &d.SourceKey, &d.ResultKey, &d.ResultJSONKey}, extra...)...)
	d.ResultMode, d.State, d.StatusReason = document.ResultMode(mode), document.State(state), document.Reason(reason)
	return d, err
}

// nullable is s, or NULL for "": as a parameter, or as an element of a
// text array (a nil *string encodes as NULL either way).
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DocumentByMessageID returns the client's document with that message id.
// Returns ENOTFOUND if there is none.
func (s *Store) DocumentByMessageID(ctx context.Context, clientID, messageID string) (document.Document, error) {
	row := s.db.QueryRow(ctx, `SELECT `+documentColumns+` FROM documents WHERE client_id = $1 AND message_id = $2`, clientID, messageID)
	d, err := scanDocument(row)
	if err != nil {
		return d, notFound(err, "document with message_id %q not found", messageID)
	}
	return d, nil
}

// DocumentByLogID returns the client's document with that log id. Another
// client's document is ENOTFOUND exactly like an unknown one (the query is
// scoped by client, so both take the same path).
func (s *Store) DocumentByLogID(ctx context.Context, clientID, logID string) (document.Document, error) {
	if !storableText(logID) {
		return document.Document{}, notFound(pgx.ErrNoRows, "document %q not found", logID)
	}
	row := s.db.QueryRow(ctx, `SELECT `+documentColumns+` FROM documents WHERE client_id = $1 AND log_id = $2`, clientID, logID)
	d, err := scanDocument(row)
	if err != nil {
		return d, notFound(err, "document %s not found", logID)
	}
	return d, nil
}

// DocumentByLogIDAnyClient is for operators and workers, which are trusted
// across tenants. Returns ENOTFOUND for unknown log ids.
func (s *Store) DocumentByLogIDAnyClient(ctx context.Context, logID string) (document.Document, error) {
	if !storableText(logID) {
		return document.Document{}, notFound(pgx.ErrNoRows, "document %q not found", logID)
	}
	row := s.db.QueryRow(ctx, `SELECT `+documentColumns+` FROM documents WHERE log_id = $1`, logID)
	d, err := scanDocument(row)
	if err != nil {
		return d, notFound(err, "document %s not found", logID)
	}
	return d, nil
}

// Document returns a document by database id. Returns ENOTFOUND if missing.
func (s *Store) Document(ctx context.Context, id string) (document.Document, error) {
	row := s.db.QueryRow(ctx, `SELECT `+documentColumns+` FROM documents WHERE id = $1`, id)
	d, err := scanDocument(row)
	if err != nil {
		return d, notFound(err, "document %s not found", id)
	}
	return d, nil
}

func notFound(err error, format string, args ...any) error {
	if err == pgx.ErrNoRows {
		return document.CodedErrorf(document.ENOTFOUND, "document_not_found", format, args...)
	}
	return translate(err, "get document")
}

// Change is one state change of a document.
type Change struct {
	DocumentID string
	From       document.State
	To         document.State
	// Reason sets status_reason: nil keeps the current one, a pointer to ""
	// clears it.
	Reason *document.Reason
	Actor  string // "ingest", "processor", "dispatcher", "operator:<name>", "sweeper"
	Detail string // free text for the event (error message, attempt info)

	// Optional column updates; nil leaves the column as it is. A result's
	// key and URI are set together (a CHECK refuses one without the other).
	ResultKey      *string
	ResultPath     *string
	ResultJSONKey  *string
	ResultJSONPath *string
	DocumentDate   *time.Time
	// CountAttempt increments attempts.
	CountAttempt bool
	// Outbox rows written in the same transaction.
	Outbox []OutboxRow
}

// transitionSQL is Transition's single statement.
var transitionSQL = `WITH upd AS (
		UPDATE documents SET state = $3,
			status_reason = CASE WHEN $4::boolean THEN $5::text ELSE status_reason END,
			result_path = coalesce($6, result_path),
			result_json_path = coalesce($7, result_json_path),
			result_key = coalesce($12, result_key),
			result_json_key = coalesce($13, result_json_key),
			document_date = coalesce($8::date, document_date),
			attempts = attempts + $9,
			updated_at = now()
		WHERE id = $1 AND state = $2
		RETURNING *),
	ev AS (INSERT INTO document_events (document_id, from_state, to_state, reason, actor, detail)
		SELECT id, $2, $3, status_reason, $10, $11 FROM upd),
	ob AS (` + outboxInsert + ` FROM upd, ` + outboxUnnest(14) + ` RETURNING id, msg_id)
	SELECT ` + documentColumns + `, ` + outboxWritten + ` FROM upd`

// Transition applies c as a compare-and-set on the document's current state,
// appends the event and writes c.Outbox, all in one transaction.
//
// Returns ECONFLICT when the transition is not in the state machine or the
// document is no longer in c.From (someone else moved it: callers that
// already made this transition treat that as a duplicate), and ENOTFOUND when
// the document does not exist.
func (s *Store) Transition(ctx context.Context, c Change) (document.Document, error) {
	if err := document.CheckTransition(c.From, c.To); err != nil {
		return document.Document{}, err
	}
	ob, err := newOutboxBatch(c.Outbox)
	if err != nil {
		return document.Document{}, err
	}
	var reason any = nil
	setReason := c.Reason != nil
	if setReason && *c.Reason != "" {
		reason = string(*c.Reason)
	}
	var date any
	if c.DocumentDate != nil {
		date = c.DocumentDate.Format(time.DateOnly)
	}
	inc := 0
	if c.CountAttempt {
		inc = 1
	}
	// One statement: the compare-and-set, its event (with the reason the
	// row has afterwards) and the outbox rows, written only when the
	// compare-and-set matched. A single statement is atomic on its own, so
	// this needs no BEGIN/COMMIT round trips, and inside WithTx it joins
	// the caller's transaction.
	args := append([]any{c.DocumentID, c.From, c.To, setReason, reason, c.ResultPath, c.ResultJSONPath, date, inc,
		c.Actor, nullable(c.Detail), c.ResultKey, c.ResultJSONKey}, ob.args()...)
	var ids []int64
	var msgIDs []string
	d, err := scanDocument(s.db.QueryRow(ctx, transitionSQL, args...), &ids, &msgIDs)
	if err == nil {
		s.written(c.Outbox, ids, msgIDs)
	}
	if err == pgx.ErrNoRows {
		// Only the failure path reads the row again, to tell a lost
		// compare-and-set from an unknown document.
		cur, err := s.Document(ctx, c.DocumentID)
		if err != nil {
			return document.Document{}, err
		}
		return document.Document{}, document.Errorf(document.ECONFLICT, "document %s is %s, not %s", c.DocumentID, cur.State, c.From)
	}
	if err != nil {
		return document.Document{}, translate(err, "transition")
	}
	return d, nil
}

// RecordEvent appends an event that does not change the state (for example
// a failed attempt that will be retried), so the history shows every try.
func (s *Store) RecordEvent(ctx context.Context, documentID string, state document.State, actor, detail string) error {
	return s.appendEvent(ctx, documentID, state, state, "", actor, detail)
}

func (s *Store) appendEvent(ctx context.Context, docID string, from, to document.State, reason document.Reason, actor, detail string) error {
	const q = `INSERT INTO document_events (document_id, from_state, to_state, reason, actor, detail) VALUES ($1, $2, $3, $4, $5, $6)`
	if _, err := s.db.Exec(ctx, q, docID, nullable(string(from)), to, nullable(string(reason)), actor, nullable(detail)); err != nil {
		return translate(err, "append event")
	}
	return nil
}

// Events returns a document's history, oldest first.
func (s *Store) Events(ctx context.Context, documentID string) ([]document.Event, error) {
	rows, err := s.db.Query(ctx, `SELECT id, coalesce(from_state, ''), to_state, coalesce(reason, ''), actor,
		coalesce(detail, ''), at FROM document_events WHERE document_id = $1 ORDER BY id`, documentID)
	if err != nil {
		return nil, translate(err, "list events")
	}
	defer rows.Close()
	var out []document.Event
	for rows.Next() {
		var e document.Event
		var from, to, reason string
		if err := rows.Scan(&e.ID, &from, &to, &reason, &e.Actor, &e.Detail, &e.At); err != nil {
			return nil, translate(err, "scan event")
		}
		e.From, e.To, e.Reason = document.State(from), document.State(to), document.Reason(reason)
		out = append(out, e)
	}
	return out, translate(rows.Err(), "list events")
}

// AddOutbox writes one outbox row (normally inside a WithTx together with
// the state change it announces).
func (s *Store) AddOutbox(ctx context.Context, m OutboxRow) error {
	ob, err := newOutboxBatch([]OutboxRow{m})
	if err != nil {
		return err
	}
	var ids []int64
	var msgIDs []string
	err = s.db.QueryRow(ctx, `WITH ob AS (`+outboxInsert+` FROM `+outboxUnnest(1)+` RETURNING id, msg_id) SELECT `+outboxWritten,
		ob.args()...).Scan(&ids, &msgIDs)
	if err != nil {
		return translate(err, "add outbox")
	}
	s.written([]OutboxRow{m}, ids, msgIDs)
	return nil
}

// outboxWritten selects the ids and msg ids of the rows a statement's ob
// CTE wrote (both in id order), for Store.written.
const outboxWritten = `(SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM ob),
	(SELECT coalesce(array_agg(msg_id ORDER BY id), '{}') FROM ob)`

// written hands the outbox rows a statement wrote, with their new ids, to
// the process's relay (HandOutboxTo): at once outside a transaction, at the
// commit inside one (WithTx), never when it rolls back. The relay publishes
// them without claiming them from the table first.
func (s *Store) written(rows []OutboxRow, ids []int64, msgIDs []string) {
	h := s.handoff.Load()
	if h == nil || len(ids) == 0 {
		return
	}
	// The INSERT … SELECT FROM unnest gives no order guarantee: pair each
	// new id with its row by msg id. Two rows of one statement never share
	// one in practice; if they did, the stream would keep only one job of
	// that id anyway.
	byMsgID := make(map[string]OutboxRow, len(rows))
	for _, r := range rows {
		byMsgID[r.MsgID] = r
	}
	out := make([]OutboxRow, len(ids))
	for i, id := range ids {
		r := byMsgID[msgIDs[i]]
		if r.Payload == nil {
			r.Payload = []byte{} // as stored and as a claim reads it back
		}
		r.ID = id
		out[i] = r
	}
	if s.txRows != nil {
		*s.txRows = append(*s.txRows, out...)
		return
	}
	(*h)(out)
}

// outboxInsert and outboxUnnest write a batch of outbox rows inside another
// statement: outboxInsert + " FROM <driving row>, " + outboxUnnest(n), with
// the batch's four arrays as parameters $n…$n+3 (outboxBatch.args).
const outboxInsert = `INSERT INTO outbox (subject, msg_id, payload, headers)
	SELECT o.subject, o.msg_id, o.payload, o.headers::jsonb`

func outboxUnnest(n int) string {
	return fmt.Sprintf(`unnest($%d::text[], $%d::text[], $%d::bytea[], $%d::text[]) AS o(subject, msg_id, payload, headers)`,
		n, n+1, n+2, n+3)
}

// outboxBatch is outbox rows as column arrays.
type outboxBatch struct {
	subjects, msgIDs []string
	payloads         [][]byte
	headers          []*string // JSON objects; nil for none
}

func newOutboxBatch(rows []OutboxRow) (outboxBatch, error) {
	var b outboxBatch
	for _, m := range rows {
		if m.Subject == "" || m.MsgID == "" {
			return b, fmt.Errorf("outbox row needs subject and msg id")
		}
		if m.Payload == nil {
			m.Payload = []byte{} // the column is NOT NULL; an empty job body is legal
		}
		var h *string
		if len(m.Headers) > 0 {
			raw, err := json.Marshal(m.Headers)
			if err != nil {
				return b, fmt.Errorf("outbox headers: %w", err)
			}
			js := string(raw)
			h = &js
		}
		b.subjects, b.msgIDs = append(b.subjects, m.Subject), append(b.msgIDs, m.MsgID)
		b.payloads, b.headers = append(b.payloads, m.Payload), append(b.headers, h)
	}
	return b, nil
}

func (b outboxBatch) args() []any { return []any{b.subjects, b.msgIDs, b.payloads, b.headers} }

// add appends o's rows to b.
func (b *outboxBatch) add(o outboxBatch) {
	b.subjects, b.msgIDs = append(b.subjects, o.subjects...), append(b.msgIDs, o.msgIDs...)
	b.payloads, b.headers = append(b.payloads, o.payloads...), append(b.headers, o.headers...)
}

// RelayOutbox claims up to limit unsent rows committed at least minAge ago
// with FOR UPDATE SKIP LOCKED (so several relays share the work without
// blocking), calls publish once with the batch in id order, deletes the
// rows it published and commits; a row whose publish failed stays. publish
// returns nil when every row was published, else one error per row (nil:
// published). If the process dies between publish and commit, the rows
// are published again later with the same MsgID and the broker's dedup
// window drops the copy. Returns how many rows were published and the
// first publish error. Rows that a relay of an older release marked with
// sent_at during a rolling upgrade (after migration 00016 deleted the
// sent ones) are deleted with the claim's batch and not published again:
// that relay published them.
//
// This is the cold path: minAge leaves the rows the process which wrote
// them has been handed (HandOutboxTo) to that process, whose relay
// publishes them within milliseconds and deletes them itself
// (DeleteOutbox).
func (s *Store) RelayOutbox(ctx context.Context, limit int, minAge time.Duration, publish func(ctx context.Context, batch []OutboxRow) []error) (int, error) {
	var sent int
	var pubErr error
	err := s.WithTx(ctx, func(tx *Store) error {
		rows, err := tx.db.Query(ctx, `SELECT id, subject, msg_id, payload, headers, sent_at IS NOT NULL FROM outbox
			WHERE created_at <= now() - $2::interval
			ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, limit, minAge)
		if err != nil {
			return translate(err, "claim outbox")
		}
		var batch []OutboxRow
		var done []int64 // published: by this claim, or by an older relay (legacy sent_at)
		for rows.Next() {
			var m OutboxRow
			var legacySent bool
			if err := rows.Scan(&m.ID, &m.Subject, &m.MsgID, &m.Payload, &m.Headers, &legacySent); err != nil {
				rows.Close()
				return translate(err, "claim outbox")
			}
			if legacySent {
				done = append(done, m.ID)
				continue
			}
			batch = append(batch, m)
		}
		if err := rows.Err(); err != nil {
			return translate(err, "claim outbox")
		}
		if len(batch) > 0 {
			errs := publish(ctx, batch)
			for i, m := range batch {
				if i < len(errs) && errs[i] != nil {
					if pubErr == nil {
						pubErr = fmt.Errorf("publish outbox %d: %w", m.ID, errs[i])
					}
					continue
				}
				done = append(done, m.ID)
				sent++
			}
		}
		if len(done) == 0 {
			return nil
		}
		return tx.DeleteOutbox(ctx, done)
	})
	if err != nil {
		return 0, err
	}
	return sent, pubErr
}

// DeleteOutbox removes rows a relay was handed and has published.
func (s *Store) DeleteOutbox(ctx context.Context, ids []int64) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM outbox WHERE id = ANY($1)`, ids); err != nil {
		return translate(err, "delete outbox")
	}
	return nil
}

// PendingOutbox counts rows not yet published.
func (s *Store) PendingOutbox(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&n)
	return n, translate(err, "count outbox")
}

// queryDocuments runs a query selecting documentColumns and scans every row;
// op names the operation in errors.
func (s *Store) queryDocuments(ctx context.Context, op, sql string, args ...any) ([]document.Document, error) {
	rows, err := s.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, translate(err, op)
	}
	defer rows.Close()
	var out []document.Document
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, translate(err, "scan document")
		}
		out = append(out, d)
	}
	return out, translate(rows.Err(), op)
}
