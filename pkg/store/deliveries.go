package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// DeliveryOutcome is where a webhook delivery stands.
type DeliveryOutcome string

// Delivery outcomes.
const (
	// DeliveryPending: not delivered yet; attempts are scheduled.
	DeliveryPending DeliveryOutcome = "pending"
	// DeliveryDelivered: the client answered 2xx.
	DeliveryDelivered DeliveryOutcome = "delivered"
	// DeliveryFailed: the retry schedule is exhausted.
	DeliveryFailed DeliveryOutcome = "failed"
	// DeliverySuperseded: the document moved on before the notification
	// went out (a deferral followed by a result), so it was not sent.
	DeliverySuperseded DeliveryOutcome = "superseded"
	// DeliverySkipped: nothing to send (ignored without feedback).
	DeliverySkipped DeliveryOutcome = "skipped"
)

// Delivery is one webhook delivery: one document state announced to the
// client. ID is the webhook-id, stable across all attempts.
type Delivery struct {
	ID         string
	DocumentID string
	ClientID   string
	LogID      string
	State      document.State  // the state being reported
	Status     document.Status // the webhook status for it
	Outcome    DeliveryOutcome
	Attempts   int
	// Failures counts failed attempts that count against the retry
	// schedule.
	Failures int
	// Claim is the generation of the job message that may attempt the
	// delivery; older copies are dropped.
	Claim         int
	NextAttemptAt *time.Time
	LeasedUntil   *time.Time
	LastError     string
	RedeliveryOf  string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	FinishedAt    *time.Time
}

// DeliveryAttempt is one HTTP call of a delivery.
type DeliveryAttempt struct {
	DeliveryID string
	N          int
	At         time.Time
	StatusCode int // 0: no response
	Latency    time.Duration
	Error      string
	BodyPrefix string // at most MaxBodyPrefix bytes of the response body
}

// MaxBodyPrefix is how much of a webhook response body is stored.
const MaxBodyPrefix = 1024

const deliveryColumns = `id, document_id::text, client_id, log_id, state, status, outcome, attempts, failures, claim,
	next_attempt_at, leased_until, coalesce(last_error, ''), coalesce(redelivery_of, ''), created_at, updated_at, finished_at`

func scanDelivery(row pgx.Row) (Delivery, error) {
	var d Delivery
	var state, status, outcome string
	err := row.Scan(&d.ID, &d.DocumentID, &d.ClientID, &d.LogID, &state, &status, &outcome, &d.Attempts, &d.Failures,
		&d.Claim, &d.NextAttemptAt, &d.LeasedUntil, &d.LastError, &d.RedeliveryOf, &d.CreatedAt, &d.UpdatedAt, &d.FinishedAt)
	d.State, d.Status, d.Outcome = document.State(state), document.Status(status), DeliveryOutcome(outcome)
	return d, err
}

// EnsureDelivery creates the delivery d.ID (pending, due after backstop: the
// time after which the scheduler republishes it if no attempt happened) or
// returns the existing row unchanged. Idempotent: the first job message of a
// delivery and its redelivered copies all land here.
func (s *Store) EnsureDelivery(ctx context.Context, d Delivery, backstop time.Duration) (Delivery, error) {
	// The first copy of a job creates the row and gets it back from the
	// same statement; only later copies read it.
	const q = `INSERT INTO deliveries (id, document_id, client_id, log_id, state, status, redelivery_of, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, now() + $8::interval)
		ON CONFLICT (id) DO NOTHING
		RETURNING ` + deliveryColumns
	got, err := scanDelivery(s.db.QueryRow(ctx, q, d.ID, d.DocumentID, d.ClientID, d.LogID, d.State, d.Status,
		nullable(d.RedeliveryOf), backstop))
	if err == pgx.ErrNoRows {
		return s.Delivery(ctx, d.ID)
	}
	if err != nil {
		return Delivery{}, translate(err, "ensure delivery")
	}
	return got, nil
}

// EnsureDeliveryWithDocument is EnsureDelivery that also returns the
// delivery's document with its client (what an attempt needs) in one
// statement, for the job's first copy as for a later one (a redelivered
// copy, such as a busy client's job coming back), where EnsureDelivery
// and a read of the document cost two or three. loaded is false when the document is gone, or when the delivery
// was created by a writer that committed while this statement ran; the
// caller reads the document itself then, as after EnsureDelivery.
func (s *Store) EnsureDeliveryWithDocument(ctx context.Context, d Delivery, backstop time.Duration) (
	dv Delivery, doc document.Document, c document.Client, loaded bool, err error) {
	// The document is read in the statement's snapshot, which is what a
	// separate read right after it would see as well. An existing
	// delivery is read in that snapshot too; one whose writer committed
	// after it began is not in it, so then nothing comes back and a second
	// statement reads the row.
	const q = `WITH ins AS (INSERT INTO deliveries (id, document_id, client_id, log_id, state, status, redelivery_of, next_attempt_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, now() + $8::interval)
			ON CONFLICT (id) DO NOTHING
			RETURNING ` + deliveryColumns + `),
		dv AS (SELECT ins.* FROM ins
			UNION ALL
			SELECT ` + deliveryColumns + ` FROM deliveries WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM ins)),
		doc AS (SELECT ` + documentColumns + `, ` + clientOfDocument + `
			WHERE documents.id = $2)
		SELECT dv.*, doc.* FROM dv, doc`
	row := s.db.QueryRow(ctx, q, d.ID, d.DocumentID, d.ClientID, d.LogID, d.State, d.Status, nullable(d.RedeliveryOf), backstop)
	var secs int64
	dv, err = scanDelivery(scanFunc(func(dvDest ...any) error {
		var derr error
		doc, derr = scanDocument(scanFunc(func(docDest ...any) error {
			return row.Scan(slices.Concat(dvDest, docDest, clientOfDocumentDest(&c, &secs))...)
		}))
		return derr
	}))
	c.ReviewTimeout = time.Duration(secs) * time.Second
	if err == pgx.ErrNoRows {
		dv, err = s.Delivery(ctx, d.ID)
		return dv, document.Document{}, document.Client{}, false, err
	}
	if err != nil {
		return Delivery{}, document.Document{}, document.Client{}, false, translate(err, "ensure delivery")
	}
	c.ID = doc.ClientID
	return dv, doc, c, true, nil
}

// Delivery returns one delivery. Returns ENOTFOUND if missing.
func (s *Store) Delivery(ctx context.Context, id string) (Delivery, error) {
	d, err := scanDelivery(s.db.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`, id))
	if err != nil {
		return d, translate(err, "delivery "+id)
	}
	return d, nil
}

// ClaimResult says whether ClaimDelivery claimed the delivery, and why not.
type ClaimResult int

// Claim results.
const (
	// Claimed: the attempt is counted, the delivery and a slot leased.
	Claimed ClaimResult = iota + 1
	// ClaimBusy: the delivery could be attempted, but every slot of its
	// client is leased; nothing changed.
	ClaimBusy
	// ClaimTaken: the delivery is not pending, missing, or another attempt
	// holds it; nothing changed.
	ClaimTaken
)

// claimDeliverySQL locks the delivery when it can be claimed, then leases
// the first free slot of the client only for such a delivery, then claims
// the delivery only when it got a slot: neither a busy client nor a taken
// delivery writes anything. Two claims racing for the last free slot
// never both get it (the loser may be told "busy" although another slot
// just came free; it asks again later). The second branch answers why a
// delivery was not claimed.
const claimDeliverySQL = `WITH dv AS (
		SELECT id FROM deliveries
		WHERE id = $1 AND outcome = 'pending' AND (leased_until IS NULL OR leased_until < now())
		FOR UPDATE),
	free AS (
		SELECT n FROM dv, generate_series(0, $4::int - 1) n
		WHERE NOT EXISTS (SELECT 1 FROM webhook_slots w WHERE w.client_id = $3 AND w.slot = n AND w.leased_until > now())
		ORDER BY n LIMIT 1),
	slot AS (
		INSERT INTO webhook_slots AS w (client_id, slot, holder, leased_until)
		SELECT $3, n, $5, now() + make_interval(secs => $6) FROM free
		ON CONFLICT (client_id, slot) DO UPDATE SET holder = EXCLUDED.holder, leased_until = EXCLUDED.leased_until
			WHERE w.leased_until <= now()
		RETURNING w.slot),
	claim AS (
		UPDATE deliveries SET attempts = attempts + 1, leased_until = now() + $2::interval,
			next_attempt_at = now() + $2::interval, updated_at = now()
		WHERE id = (SELECT id FROM dv) AND EXISTS (SELECT 1 FROM slot)
		RETURNING ` + deliveryColumns + `)
	SELECT 'claimed', claim.* FROM claim
	UNION ALL
	SELECT CASE WHEN EXISTS (SELECT 1 FROM dv) THEN 'busy' ELSE 'taken' END, ` + deliveryColumns + `
	FROM deliveries WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM claim)`

// ClaimDelivery starts attempt n+1 of a pending delivery together with a
// lease on one of its client's webhook slots (slot names the client, the
// holder, the number of slots and the slot's lease): it counts the attempt
// and leases the delivery for lease (no other worker attempts it
// meanwhile; if this worker dies, the scheduler republishes it when the
// lease ends). Whoever records the attempt or gives up releases the slot
// (by its holder). Only a Claimed delivery is returned.
func (s *Store) ClaimDelivery(ctx context.Context, id string, lease time.Duration, slot WebhookSlot) (Delivery, ClaimResult, error) {
	var res string
	row := s.db.QueryRow(ctx, claimDeliverySQL, id, lease, slot.ClientID, slot.Per, slot.Holder, slot.Lease.Seconds())
	d, err := scanDelivery(scanFunc(func(dest ...any) error {
		return row.Scan(append([]any{&res}, dest...)...)
	}))
	switch {
	case err == pgx.ErrNoRows:
		return Delivery{}, ClaimTaken, nil
	case err != nil:
		return Delivery{}, 0, translate(err, "claim delivery")
	case res == "busy":
		return Delivery{}, ClaimBusy, nil
	case res == "taken":
		return Delivery{}, ClaimTaken, nil
	}
	return d, Claimed, nil
}

// AttemptResult is how an attempt ended, as RecordAttempt stores it.
type AttemptResult struct {
	Attempt DeliveryAttempt
	// Outcome is the delivery's new outcome (pending: retry at NextAttempt).
	Outcome DeliveryOutcome
	// CountFailure increments the delivery's failures.
	CountFailure bool
	// NextAttempt is when a pending delivery is due again (ignored for
	// other outcomes).
	NextAttempt time.Time
	// Changes are document transitions made in the same transaction, so the
	// state history and the attempt that caused it never disagree.
	Changes []Change
	// Slot, when set, is released by the statement that records the
	// attempt, so a delivered document costs no round trip of its own for
	// it. A statement that writes nothing (a lost compare-and-set, a
	// missing delivery) releases nothing.
	Slot *WebhookSlot
}

// RecordAttempt stores an attempt, releases the delivery's lease and
// r.Slot, sets its outcome and applies r.Changes, all in one transaction. A change that
// conflicts (the document moved) rolls everything back and returns ECONFLICT.
// The attempt and the delivery's update are one statement; without changes
// that is all, with them it runs in a transaction with one statement per
// change.
func (s *Store) RecordAttempt(ctx context.Context, r AttemptResult) (Delivery, error) {
	if chainable(r.Changes) {
		return s.recordAttemptChain(ctx, r)
	}
	if len(r.Changes) > 0 && !s.inTx {
		var out Delivery
		err := s.WithTx(ctx, func(tx *Store) error {
			var err error
			out, err = tx.RecordAttempt(ctx, r)
			return err
		})
		return out, err
	}
	d, err := scanDelivery(s.db.QueryRow(ctx, recordAttemptSQL, append(attemptArgs(r), slotArgs(r.Slot)...)...))
	if err != nil {
		return Delivery{}, translate(err, "record attempt")
	}
	for _, c := range r.Changes {
		if _, err := s.Transition(ctx, c); err != nil {
			return Delivery{}, err
		}
	}
	return d, nil
}

// attemptArgs are the parameters $1…$9 of RecordAttempt's statements.
func attemptArgs(r AttemptResult) []any {
	a := r.Attempt
	var code any
	if a.StatusCode != 0 {
		code = a.StatusCode
	}
	inc := 0
	if r.CountFailure {
		inc = 1
	}
	var next any
	if r.Outcome == DeliveryPending {
		next = r.NextAttempt
	}
	return []any{a.DeliveryID, r.Outcome, inc, next, nullable(cleanText(a.Error, 4096)), a.N, code,
		float64(a.Latency) / float64(time.Millisecond), nullable(cleanText(a.BodyPrefix, MaxBodyPrefix))}
}

// chainable reports whether changes can be applied by recordAttemptChain:
// a chain of plain state moves (c[i].To == c[i+1].From) of one document
// that set no column but the state and write no outbox rows. The
// dispatcher's 2xx (processed_* → sent_* → finished_*) and its exhausted
// schedule are such chains.
func chainable(changes []Change) bool {
	if len(changes) == 0 {
		return false
	}
	for i, c := range changes {
		if c.Reason != nil || c.ResultPath != nil || c.ResultJSONPath != nil || c.ResultKey != nil || c.ResultJSONKey != nil || c.DocumentDate != nil ||
			c.CountAttempt || len(c.Outbox) > 0 || c.DocumentID != changes[0].DocumentID ||
			(i > 0 && c.From != changes[i-1].To) {
			return false
		}
	}
	return true
}

// recordAttemptSQL is RecordAttempt without state changes: the attempt,
// the delivery's outcome and the slot's release in one statement.
var recordAttemptSQL = `WITH att AS (INSERT INTO delivery_attempts (delivery_id, n, status_code, latency_ms, error, body_prefix)
		VALUES ($1, $6, $7, $8, $5, $9) ON CONFLICT (delivery_id, n) DO NOTHING),
	upd AS (UPDATE deliveries SET outcome = $2, failures = failures + $3, next_attempt_at = $4,
		leased_until = NULL, last_error = $5, updated_at = now(),
		finished_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END
		WHERE id = $1 RETURNING ` + deliveryColumns + `),
	rel AS (` + releaseSlotSQL(10) + ` AND EXISTS (SELECT 1 FROM upd))
	SELECT upd.* FROM upd`

// recordAttemptChainSQL is recordAttemptChain's single statement: the
// document's compare-and-set straight to the chain's last state with one
// event per step (in order, so their ids keep the history's order), and
// the attempt, the slot's release and the delivery's update, written only
// when the compare-and-set matched.
var recordAttemptChainSQL = `WITH upd AS (
		UPDATE documents SET state = $11, updated_at = now()
		WHERE id = $10 AND state = $12
		RETURNING id, status_reason),
	ev AS (INSERT INTO document_events (document_id, from_state, to_state, reason, actor, detail)
		SELECT upd.id, e.from_state, e.to_state, upd.status_reason, e.actor, nullif(e.detail, '')
		FROM upd, unnest($13::text[], $14::text[], $15::text[], $16::text[]) WITH ORDINALITY
			AS e(from_state, to_state, actor, detail, n)
		ORDER BY e.n),
	att AS (INSERT INTO delivery_attempts (delivery_id, n, status_code, latency_ms, error, body_prefix)
		SELECT $1, $6::integer, $7::integer, $8::double precision, $5, $9::text WHERE EXISTS (SELECT 1 FROM upd)
		ON CONFLICT (delivery_id, n) DO NOTHING),
	rel AS (` + releaseSlotSQL(17) + ` AND EXISTS (SELECT 1 FROM upd))
	UPDATE deliveries SET outcome = $2, failures = failures + $3, next_attempt_at = $4,
		leased_until = NULL, last_error = $5, updated_at = now(),
		finished_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END
	WHERE id = $1 AND EXISTS (SELECT 1 FROM upd) RETURNING ` + deliveryColumns

// recordAttemptChain is RecordAttempt for chainable changes in one
// statement: no BEGIN/COMMIT round trips, and a 2xx moves the document
// through sent_* to finished_* at once (both steps recorded as events)
// instead of in a second statement. A lost compare-and-set writes nothing
// and returns ECONFLICT.
func (s *Store) recordAttemptChain(ctx context.Context, r AttemptResult) (Delivery, error) {
	var from, to, actors, details []string
	for _, c := range r.Changes {
		if err := document.CheckTransition(c.From, c.To); err != nil {
			return Delivery{}, err
		}
		from, to = append(from, string(c.From)), append(to, string(c.To))
		actors, details = append(actors, c.Actor), append(details, c.Detail)
	}
	first, last := r.Changes[0], r.Changes[len(r.Changes)-1]
	args := append(attemptArgs(r), first.DocumentID, last.To, first.From, from, to, actors, details)
	args = append(args, slotArgs(r.Slot)...)
	d, err := scanDelivery(s.db.QueryRow(ctx, recordAttemptChainSQL, args...))
	if err == pgx.ErrNoRows {
		// Only the failure path reads the document: a lost compare-and-set
		// or an unknown document or delivery.
		cur, err := s.Document(ctx, first.DocumentID)
		if err != nil {
			return Delivery{}, err
		}
		if cur.State != first.From {
			return Delivery{}, document.Errorf(document.ECONFLICT, "document %s is %s, not %s", first.DocumentID, cur.State, first.From)
		}
		return Delivery{}, document.Errorf(document.ENOTFOUND, "delivery %s not found", r.Attempt.DeliveryID)
	}
	if err != nil {
		return Delivery{}, translate(err, "record attempt")
	}
	return d, nil
}

// SetDeliveryOutcome closes a pending delivery without an attempt
// (superseded, skipped) or reschedules it to next (nil: not scheduled),
// releasing its lease. A delivery that is no longer pending is left alone.
func (s *Store) SetDeliveryOutcome(ctx context.Context, id string, o DeliveryOutcome, next *time.Time, detail string) error {
	const q = `UPDATE deliveries SET outcome = $2, next_attempt_at = $3, leased_until = NULL, updated_at = now(),
			last_error = coalesce($4, last_error),
			finished_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END
		WHERE id = $1 AND outcome = 'pending'`
	if _, err := s.db.Exec(ctx, q, id, o, next, nullable(detail)); err != nil {
		return translate(err, "set delivery outcome")
	}
	return nil
}

// RescheduleDelivery makes a pending delivery that no attempt holds due at
// at (the scheduler then republishes it). Other deliveries are left alone.
func (s *Store) RescheduleDelivery(ctx context.Context, id string, at time.Time) error {
	const q = `UPDATE deliveries SET next_attempt_at = $2, updated_at = now()
		WHERE id = $1 AND outcome = 'pending' AND (leased_until IS NULL OR leased_until < now())`
	if _, err := s.db.Exec(ctx, q, id, at); err != nil {
		return translate(err, "reschedule delivery")
	}
	return nil
}

// ClaimDueDeliveries hands pending deliveries that are due, and whose client's
// endpoint is enabled, to publish (up to limit, FOR UPDATE SKIP LOCKED so
// several dispatchers share the work). Each gets a new claim number and is
// due again after backstop, in case the published job is lost. A publish
// error stops the batch; rows published before it keep their new claim.
func (s *Store) ClaimDueDeliveries(ctx context.Context, limit int, backstop time.Duration, publish func(ctx context.Context, d Delivery) error) (int, error) {
	var n int
	var pubErr error
	err := s.WithTx(ctx, func(tx *Store) error {
		const q = `UPDATE deliveries SET claim = claim + 1, next_attempt_at = now() + $2::interval, updated_at = now()
			WHERE id IN (SELECT d.id FROM deliveries d JOIN clients c ON c.id = d.client_id
				WHERE d.outcome = 'pending' AND d.next_attempt_at <= now() AND c.webhook_enabled
					AND (d.leased_until IS NULL OR d.leased_until < now())
				ORDER BY d.next_attempt_at LIMIT $1 FOR UPDATE OF d SKIP LOCKED)
			RETURNING ` + deliveryColumns
		rows, err := tx.db.Query(ctx, q, limit, backstop)
		if err != nil {
			return translate(err, "claim due deliveries")
		}
		var batch []Delivery
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return translate(err, "scan delivery")
			}
			batch = append(batch, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return translate(err, "claim due deliveries")
		}
		var failed []string
		for i, d := range batch {
			if err := publish(ctx, d); err != nil {
				pubErr = fmt.Errorf("publish delivery %s: %w", d.ID, err)
				for _, rest := range batch[i:] {
					failed = append(failed, rest.ID)
				}
				break
			}
			n++
		}
		if len(failed) > 0 {
			// Not published: leave them due now instead of after backstop.
			if _, err := tx.db.Exec(ctx, `UPDATE deliveries SET claim = claim - 1, next_attempt_at = now()
				WHERE id = ANY($1)`, failed); err != nil {
				return translate(err, "unclaim deliveries")
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, pubErr
}

// Deliveries lists a document's deliveries, oldest first.
func (s *Store) Deliveries(ctx context.Context, documentID string) ([]Delivery, error) {
	rows, err := s.db.Query(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE document_id = $1 ORDER BY created_at, id`, documentID)
	if err != nil {
		return nil, translate(err, "list deliveries")
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, translate(err, "scan delivery")
		}
		out = append(out, d)
	}
	return out, translate(rows.Err(), "list deliveries")
}

// DeliveryAttempts lists a delivery's attempts in order.
func (s *Store) DeliveryAttempts(ctx context.Context, deliveryID string) ([]DeliveryAttempt, error) {
	rows, err := s.db.Query(ctx, `SELECT delivery_id, n, at, coalesce(status_code, 0), latency_ms, coalesce(error, ''),
		coalesce(body_prefix, '') FROM delivery_attempts WHERE delivery_id = $1 ORDER BY n`, deliveryID)
	if err != nil {
		return nil, translate(err, "list attempts")
	}
	defer rows.Close()
	var out []DeliveryAttempt
	for rows.Next() {
		var a DeliveryAttempt
		var ms float64
		if err := rows.Scan(&a.DeliveryID, &a.N, &a.At, &a.StatusCode, &ms, &a.Error, &a.BodyPrefix); err != nil {
			return nil, translate(err, "scan attempt")
		}
		a.Latency = time.Duration(ms * float64(time.Millisecond))
		out = append(out, a)
	}
	return out, translate(rows.Err(), "list attempts")
}

// DeliveryBacklog summarises pending deliveries for metrics.
type DeliveryBacklog struct {
	Pending int // pending deliveries
	Retries int // pending deliveries with at least one failed attempt
	// Oldest is the creation time of the oldest pending delivery (zero when
	// there is none).
	Oldest           time.Time
	DisabledClients  int
	WaitingOnDisable int // pending deliveries of clients whose endpoint is disabled
}

// DeliveryBacklog reads the backlog counters.
func (s *Store) DeliveryBacklog(ctx context.Context) (DeliveryBacklog, error) {
	var b DeliveryBacklog
	var oldest *time.Time
	err := s.db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE d.failures > 0 OR d.attempts > 0), min(d.created_at),
			count(*) FILTER (WHERE NOT c.webhook_enabled),
			(SELECT count(*) FROM clients WHERE NOT webhook_enabled)
		FROM deliveries d JOIN clients c ON c.id = d.client_id WHERE d.outcome = 'pending'`).
		Scan(&b.Pending, &b.Retries, &oldest, &b.WaitingOnDisable, &b.DisabledClients)
	if oldest != nil {
		b.Oldest = *oldest
	}
	return b, translate(err, "delivery backlog")
}

// reportedStates are the outcome states a delivery reports.
var reportedStates = statesWhere(document.State.ReportsOutcome)

// LastReportedState is the state of the document's latest outcome delivery
// (document.State.ReportsOutcome: processed_*), what a redelivery re-sends.
// Returns ENOTFOUND when there is none.
func (s *Store) LastReportedState(ctx context.Context, documentID string) (document.State, error) {
	var st string
	err := s.db.QueryRow(ctx, `SELECT state FROM deliveries WHERE document_id = $1
		AND state = ANY($2::text[])
		ORDER BY created_at DESC, id DESC LIMIT 1`, documentID, reportedStates).Scan(&st)
	if err != nil {
		return "", translate(err, "last reported state")
	}
	return document.State(st), nil
}

// Redelivery asks for a document to be sent again under a new webhook-id.
type Redelivery struct {
	Delivery Delivery // the new delivery (ID, state, status, RedeliveryOf set)
	Job      OutboxRow
}

// CreateRedelivery inserts the delivery and writes its job to the outbox in
// one transaction, plus an event on the document naming the operator. The
// delivery is also due after backstop (the outbox job normally arrives
// first).
func (s *Store) CreateRedelivery(ctx context.Context, r Redelivery, actor string, backstop time.Duration) error {
	return s.WithTx(ctx, func(tx *Store) error {
		cur, err := tx.Document(ctx, r.Delivery.DocumentID)
		if err != nil {
			return err
		}
		if err := tx.RecordEvent(ctx, cur.ID, cur.State, actor, "redeliver as "+r.Delivery.ID); err != nil {
			return err
		}
		if _, err := tx.EnsureDelivery(ctx, r.Delivery, backstop); err != nil {
			return err
		}
		return tx.AddOutbox(ctx, r.Job)
	})
}

// DocumentsFilter selects documents for bulk operator commands; empty
// fields match everything, but at least one must be set.
type DocumentsFilter struct {
	ClientID string
	Since    time.Time // updated at or after
	State    document.State
}

// FindDocuments lists documents matching f (oldest first, at most limit).
func (s *Store) FindDocuments(ctx context.Context, f DocumentsFilter, limit int) ([]document.Document, error) {
	if f.ClientID == "" && f.Since.IsZero() && f.State == "" {
		return nil, document.Errorf(document.EINVALID, "a filter (client, since or state) is required")
	}
	var since any
	if !f.Since.IsZero() {
		since = f.Since
	}
	return s.queryDocuments(ctx, "find documents", `SELECT `+documentColumns+` FROM documents
		WHERE ($1::text IS NULL OR client_id = $1) AND ($2::timestamptz IS NULL OR updated_at >= $2)
			AND ($3::text IS NULL OR state = $3)
		ORDER BY created_at, id LIMIT $4`, nullable(f.ClientID), since, nullable(string(f.State)), limit)
}

// cleanText makes s storable as PostgreSQL text (valid UTF-8, no NUL) and
// cuts it to at most max bytes on a rune boundary.
func cleanText(s string, max int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
