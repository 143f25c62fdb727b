package store

import (
	"context"
	"errors"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// The mailbox intake's configuration and health (migration 00025): which
// mailboxes are read (from INTAKE_MAILBOXES_FILE or `intakectl mailboxes
// add`), and how each one's last pass went, for `intakectl status` and the
// ops console.

// Where a mailbox's configuration came from (MailboxConfig.Source).
const (
	MailboxFromFile = "file" // INTAKE_MAILBOXES_FILE, upserted at every start
	MailboxFromCLI  = "cli"  // intakectl mailboxes add
)

// MailboxConfig is one mailbox the intake reads: its entry in the
// mailboxes file's YAML form (names of secret files and variables, never
// a secret).
type MailboxConfig struct {
	ID        string
	ClientID  string
	Config    string
	Source    string
	UpdatedAt time.Time
}

// UpsertMailboxConfig adds or replaces a mailbox; its client must exist
// (EINVALID otherwise).
func (s *Store) UpsertMailboxConfig(ctx context.Context, c MailboxConfig) error {
	_, err := s.db.Exec(ctx, `INSERT INTO mailboxes (id, client_id, config, source) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET client_id = $2, config = $3, source = $4, updated_at = now()
		WHERE (mailboxes.client_id, mailboxes.config, mailboxes.source) IS DISTINCT FROM ($2, $3, $4)`,
		c.ID, c.ClientID, c.Config, c.Source)
	return translate(err, "mailbox "+c.ID)
}

// MailboxConfigs returns every configured mailbox, by id.
func (s *Store) MailboxConfigs(ctx context.Context) ([]MailboxConfig, error) {
	rows, err := s.db.Query(ctx, `SELECT id, client_id, config, source, updated_at FROM mailboxes ORDER BY id`)
	if err != nil {
		return nil, translate(err, "list mailboxes")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MailboxConfig, error) {
		var c MailboxConfig
		err := r.Scan(&c.ID, &c.ClientID, &c.Config, &c.Source, &c.UpdatedAt)
		return c, err
	})
	return out, translate(err, "list mailboxes")
}

// MailboxConfig returns one mailbox; ENOTFOUND when there is none.
func (s *Store) MailboxConfig(ctx context.Context, id string) (MailboxConfig, error) {
	c := MailboxConfig{ID: id}
	err := s.db.QueryRow(ctx, `SELECT client_id, config, source, updated_at FROM mailboxes WHERE id = $1`, id).
		Scan(&c.ClientID, &c.Config, &c.Source, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, document.Errorf(document.ENOTFOUND, "mailbox %s is not configured", id)
	}
	return c, translate(err, "mailbox "+id)
}

// DeleteMailboxConfig removes a mailbox (its pollers stop at their next
// reload); its position and the record of its mails stay, so adding it
// again goes on where it stopped. ENOTFOUND when there is none.
func (s *Store) DeleteMailboxConfig(ctx context.Context, id string) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM mailboxes WHERE id = $1`, id)
	if err != nil {
		return translate(err, "remove mailbox "+id)
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "mailbox %s is not configured", id)
	}
	return nil
}

// MailboxPass is what a poller saw in one pass over its mailbox.
type MailboxPass struct {
	MailboxID string
	ClientID  string
	Reader    string // host and pid of the poller
	Err       string // "" for a pass that read every mail it could
	// Unprocessed mails left in the folder after the pass, and the arrival
	// of the oldest (zero when none).
	Unprocessed       int
	OldestUnprocessed time.Time
}

// RecordMailboxPass stores a pass in the mailbox's health row: a success
// resets the failed passes; a failure counts one and keeps its error.
func (s *Store) RecordMailboxPass(ctx context.Context, p MailboxPass) error {
	var oldest *time.Time
	if !p.OldestUnprocessed.IsZero() {
		oldest = &p.OldestUnprocessed
	}
	_, err := s.db.Exec(ctx, `INSERT INTO mailbox_health AS h (mailbox_id, client_id, reader, last_pass_at, last_success_at,
			failed_passes, last_error, last_error_at, unprocessed, oldest_unprocessed_at)
		VALUES ($1, $2, $3, now(), CASE WHEN $4 = '' THEN now() END, CASE WHEN $4 = '' THEN 0 ELSE 1 END,
			$4, CASE WHEN $4 <> '' THEN now() END, $5, $6)
		ON CONFLICT (mailbox_id) DO UPDATE SET client_id = $2, reader = $3, last_pass_at = now(),
			last_success_at = CASE WHEN $4 = '' THEN now() ELSE h.last_success_at END,
			failed_passes = CASE WHEN $4 = '' THEN 0 ELSE h.failed_passes + 1 END,
			last_error = CASE WHEN $4 = '' THEN h.last_error ELSE $4 END,
			last_error_at = CASE WHEN $4 = '' THEN h.last_error_at ELSE now() END,
			unprocessed = $5, oldest_unprocessed_at = $6`,
		p.MailboxID, p.ClientID, p.Reader, p.Err, p.Unprocessed, oldest)
	return translate(err, "record mailbox pass")
}

// MailboxStaleAfter is how long after its last pass a mailbox counts as
// unread (no poller holds it, or its poller hangs): ten poll intervals of
// the default minute.
const MailboxStaleAfter = 10 * time.Minute

// MailboxStatus is one mailbox's health and its last Window's counts.
type MailboxStatus struct {
	MailboxID  string
	ClientID   string
	Configured bool // in the mailboxes table (false: read from a file without it, or removed)
	// The health row; LastPassAt is zero when no pass was recorded.
	Reader            string
	LastPassAt        time.Time
	LastSuccessAt     time.Time
	FailedPasses      int
	LastError         string
	LastErrorAt       time.Time
	Unprocessed       int
	OldestUnprocessed time.Time
	// Mails finished or failing within the window: seen (all of them),
	// processed, failed (moved to the error folder), retrying (failed
	// reads, still in the folder); PDFs that became new documents.
	Seen, Processed, Failed, Retrying, DocumentsCreated int
	// At is the database's now, which ages are measured against.
	At time.Time
}

// Health is the mailbox's state in one word: never (no pass yet), stale
// (no pass for MailboxStaleAfter), failing (its last pass failed), ok.
func (m MailboxStatus) Health() string {
	switch {
	case m.LastPassAt.IsZero():
		return "never"
	case m.At.Sub(m.LastPassAt) > MailboxStaleAfter:
		return "stale"
	case m.FailedPasses > 0:
		return "failing"
	}
	return "ok"
}

// MailboxStatuses returns every mailbox configured or with a health row,
// of the given clients (nil: all), with its counts of the last window.
func (s *Store) MailboxStatuses(ctx context.Context, clients []string, window time.Duration) ([]MailboxStatus, error) {
	rows, err := s.db.Query(ctx, `SELECT i.mailbox_id, i.client_id, c.id IS NOT NULL,
			coalesce(h.reader, ''), h.last_pass_at, h.last_success_at, coalesce(h.failed_passes, 0),
			coalesce(h.last_error, ''), h.last_error_at, coalesce(h.unprocessed, 0), h.oldest_unprocessed_at,
			mm.seen, mm.processed, mm.failed, mm.retrying, ma.created, now()
		FROM (SELECT DISTINCT ON (mailbox_id) mailbox_id, client_id FROM (
				SELECT id AS mailbox_id, client_id, 0 AS o FROM mailboxes
				UNION ALL SELECT mailbox_id, client_id, 1 FROM mailbox_health) x
			ORDER BY mailbox_id, o) i
		LEFT JOIN mailboxes c ON c.id = i.mailbox_id
		LEFT JOIN mailbox_health h ON h.mailbox_id = i.mailbox_id
		CROSS JOIN LATERAL (SELECT count(*) AS seen, count(*) FILTER (WHERE outcome = 'processed') AS processed,
				count(*) FILTER (WHERE outcome = 'failed') AS failed,
				count(*) FILTER (WHERE outcome IN ('pending', 'committed') AND failures > 0) AS retrying
			FROM mailbox_mails WHERE mailbox_id = i.mailbox_id AND updated_at >= now() - make_interval(secs => $2)) mm
		CROSS JOIN LATERAL (SELECT count(*) AS created FROM mailbox_attachments
			WHERE mailbox_id = i.mailbox_id AND outcome = 'created' AND updated_at >= now() - make_interval(secs => $2)) ma
		WHERE $1::text[] IS NULL OR i.client_id = ANY ($1)
		ORDER BY i.mailbox_id`, clients, window.Seconds())
	if err != nil {
		return nil, translate(err, "mailbox status")
	}
	out, err := pgx.CollectRows(rows, scanMailboxStatus)
	return out, translate(err, "mailbox status")
}

func scanMailboxStatus(r pgx.CollectableRow) (MailboxStatus, error) {
	var m MailboxStatus
	var pass, success, errAt, oldest *time.Time
	err := r.Scan(&m.MailboxID, &m.ClientID, &m.Configured, &m.Reader, &pass, &success, &m.FailedPasses,
		&m.LastError, &errAt, &m.Unprocessed, &oldest, &m.Seen, &m.Processed, &m.Failed, &m.Retrying,
		&m.DocumentsCreated, &m.At)
	for _, f := range []struct {
		dst *time.Time
		src *time.Time
	}{{&m.LastPassAt, pass}, {&m.LastSuccessAt, success}, {&m.LastErrorAt, errAt}, {&m.OldestUnprocessed, oldest}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return m, err
}
