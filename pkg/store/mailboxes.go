package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// The mailbox intake's bookkeeping (services/mailintake): where it is in
// each folder, what became of each mail and each of its PDFs, and the lock
// that lets one poller at a time read a mailbox.

// MailboxPosition is a folder's UIDVALIDITY and the highest UID finished.
type MailboxPosition struct {
	UIDValidity uint32
	LastUID     uint32
}

// Outcomes of a mail (MailboxMail.Outcome).
const (
	MailPending   = "pending"   // read, its documents not all created yet
	MailCommitted = "committed" // its documents exist; the move is pending
	MailProcessed = "processed" // moved to the processed folder
	MailFailed    = "failed"    // moved to the error folder
)

// MailboxMail is one mail of a mailbox folder, named by UIDVALIDITY and UID.
type MailboxMail struct {
	MailboxID   string
	UIDValidity uint32
	UID         uint32
	MessageID   string
	Outcome     string
	Failures    int
	Reason      string
}

// Outcomes of one PDF (MailboxAttachment.Outcome).
const (
	AttachmentCreated  = "created"  // a new document
	AttachmentReplayed = "replayed" // the document of an earlier read
	AttachmentRefused  = "refused"  // intake said no, Reason says why
)

// MailboxAttachment is one PDF of a mail and what became of it.
type MailboxAttachment struct {
	Index     int
	MessageID string
	Filename  string
	Outcome   string
	LogID     string
	Reason    string
}

// MailboxPosition returns mailboxID's position; ok is false before the
// first read.
func (s *Store) MailboxPosition(ctx context.Context, mailboxID string) (p MailboxPosition, ok bool, err error) {
	var v, u int64
	err = s.db.QueryRow(ctx, `SELECT uid_validity, last_uid FROM mailbox_positions WHERE mailbox_id = $1`, mailboxID).Scan(&v, &u)
	if errors.Is(err, pgx.ErrNoRows) {
		return MailboxPosition{}, false, nil
	}
	if err != nil {
		return MailboxPosition{}, false, translate(err, "mailbox position")
	}
	return MailboxPosition{UIDValidity: uint32(v), LastUID: uint32(u)}, true, nil
}

// SetMailboxPosition stores mailboxID's position (a new UIDVALIDITY with
// LastUID 0 when the server renumbered the folder).
func (s *Store) SetMailboxPosition(ctx context.Context, mailboxID string, p MailboxPosition) error {
	_, err := s.db.Exec(ctx, `INSERT INTO mailbox_positions (mailbox_id, uid_validity, last_uid) VALUES ($1, $2, $3)
		ON CONFLICT (mailbox_id) DO UPDATE SET uid_validity = $2, last_uid = $3, updated_at = now()`,
		mailboxID, int64(p.UIDValidity), int64(p.LastUID))
	return translate(err, "set mailbox position")
}

// MailboxMail returns the mail's row; ok is false for a mail never read.
func (s *Store) MailboxMail(ctx context.Context, mailboxID string, uidValidity, uid uint32) (m MailboxMail, ok bool, err error) {
	m = MailboxMail{MailboxID: mailboxID, UIDValidity: uidValidity, UID: uid}
	err = s.db.QueryRow(ctx, `SELECT message_id, outcome, failures, reason FROM mailbox_mails
		WHERE mailbox_id = $1 AND uid_validity = $2 AND uid = $3`, mailboxID, int64(uidValidity), int64(uid)).
		Scan(&m.MessageID, &m.Outcome, &m.Failures, &m.Reason)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, false, nil
	}
	if err != nil {
		return m, false, translate(err, "mailbox mail")
	}
	return m, true, nil
}

// RecordMailFailure counts one failed read of m (its Reason) and returns
// how many there were.
func (s *Store) RecordMailFailure(ctx context.Context, m MailboxMail) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `INSERT INTO mailbox_mails (mailbox_id, uid_validity, uid, message_id, outcome, failures, reason)
		VALUES ($1, $2, $3, $4, 'pending', 1, $5)
		ON CONFLICT (mailbox_id, uid_validity, uid) DO UPDATE
		SET failures = mailbox_mails.failures + 1, reason = $5, updated_at = now()
		RETURNING failures`, m.MailboxID, int64(m.UIDValidity), int64(m.UID), m.MessageID, m.Reason).Scan(&n)
	return n, translate(err, "record mail failure")
}

// CommitMail records that m's documents exist (m.Outcome, normally
// MailCommitted) with each attachment's outcome, in one transaction: after
// it a crash before the move only repeats the move.
func (s *Store) CommitMail(ctx context.Context, m MailboxMail, atts []MailboxAttachment) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.upsertMail(ctx, m); err != nil {
			return err
		}
		for _, a := range atts {
			_, err := tx.db.Exec(ctx, `INSERT INTO mailbox_attachments
				(mailbox_id, uid_validity, uid, attachment, message_id, filename, outcome, log_id, reason)
				VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), $9)
				ON CONFLICT (mailbox_id, uid_validity, uid, attachment) DO UPDATE
				SET outcome = $7, log_id = NULLIF($8, ''), reason = $9, updated_at = now()`,
				m.MailboxID, int64(m.UIDValidity), int64(m.UID), a.Index, a.MessageID, a.Filename, a.Outcome, a.LogID, a.Reason)
			if err != nil {
				return translate(err, "record mail attachment")
			}
		}
		return nil
	})
}

func (s *Store) upsertMail(ctx context.Context, m MailboxMail) error {
	_, err := s.db.Exec(ctx, `INSERT INTO mailbox_mails (mailbox_id, uid_validity, uid, message_id, outcome, failures, reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (mailbox_id, uid_validity, uid) DO UPDATE
		SET message_id = $4, outcome = $5, reason = $7, updated_at = now()`,
		m.MailboxID, int64(m.UIDValidity), int64(m.UID), m.MessageID, m.Outcome, m.Failures, m.Reason)
	return translate(err, "record mail")
}

// FinishMail records that m was moved (m.Outcome MailProcessed or
// MailFailed) and advances the folder's position past it.
func (s *Store) FinishMail(ctx context.Context, m MailboxMail) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.upsertMail(ctx, m); err != nil {
			return err
		}
		_, err := tx.db.Exec(ctx, `UPDATE mailbox_positions SET last_uid = GREATEST(last_uid, $3), updated_at = now()
			WHERE mailbox_id = $1 AND uid_validity = $2`, m.MailboxID, int64(m.UIDValidity), int64(m.UID))
		return translate(err, "advance mailbox position")
	})
}

// MailAttachments returns the attachments recorded for a mail, by index.
func (s *Store) MailAttachments(ctx context.Context, mailboxID string, uidValidity, uid uint32) ([]MailboxAttachment, error) {
	rows, err := s.db.Query(ctx, `SELECT attachment, message_id, filename, outcome, coalesce(log_id, ''), reason
		FROM mailbox_attachments WHERE mailbox_id = $1 AND uid_validity = $2 AND uid = $3 ORDER BY attachment`,
		mailboxID, int64(uidValidity), int64(uid))
	if err != nil {
		return nil, translate(err, "mail attachments")
	}
	var out []MailboxAttachment
	for rows.Next() {
		var a MailboxAttachment
		if err := rows.Scan(&a.Index, &a.MessageID, &a.Filename, &a.Outcome, &a.LogID, &a.Reason); err != nil {
			return nil, translate(err, "mail attachments")
		}
		out = append(out, a)
	}
	return out, translate(rows.Err(), "mail attachments")
}

// MailboxLock is the lock that makes one poller the reader of a mailbox:
// a PostgreSQL session advisory lock on a connection of its own, so that
// the pool's connections never carry it and a process that dies releases
// it with its session.
type MailboxLock struct {
	conn *pgx.Conn
}

// TryMailboxLock takes mailboxID's lock if no other session holds it; ok
// is false when one does (this poller stands by). The lock's key includes
// the schema, so schemas sharing a database (the tests') do not contend.
func (s *Store) TryMailboxLock(ctx context.Context, mailboxID string) (_ *MailboxLock, ok bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, false, translate(err, "mailbox lock connect")
	}
	err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended(current_schema() || ':mailintake:' || $1, 0))`,
		mailboxID).Scan(&ok)
	if err != nil || !ok {
		closeConn(conn)
		return nil, false, translate(err, "mailbox lock")
	}
	return &MailboxLock{conn: conn}, true, nil
}

// Held checks that the lock's session is still alive (a lost connection
// has lost the lock, and the poller must stop reading).
func (l *MailboxLock) Held(ctx context.Context) error {
	return translate(l.conn.Ping(ctx), "mailbox lock")
}

// Release ends the lock's session, which releases the lock.
func (l *MailboxLock) Release() { closeConn(l.conn) }

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// SettleMovedMails records as finished the mails of an IMAP folder whose
// documents were committed and which left the folder without their record
// saying so: the intake stopped between the move and FinishMail. listed
// are the folder's UIDs above the position, as the session just listed
// them. A committed mail not among them was moved: a mail is moved only
// after its documents are committed, and one whose move failed stays above
// the position (later mails wait for it), so it is listed. Each becomes
// processed, or failed where it was refused (its reason kept). The
// position is left to the next finished mail, as a listed mail below a
// settled one must still be read. It returns the UIDs it settled.
func (s *Store) SettleMovedMails(ctx context.Context, mailboxID string, uidValidity uint32, listed []uint32) ([]uint32, error) {
	uids := make([]int64, len(listed))
	for i, u := range listed {
		uids[i] = int64(u)
	}
	rows, err := s.db.Query(ctx, `UPDATE mailbox_mails m
		SET outcome = CASE WHEN m.reason = '' THEN 'processed' ELSE 'failed' END, updated_at = now()
		WHERE m.mailbox_id = $1 AND m.uid_validity = $2 AND m.outcome = 'committed'
		  AND NOT (m.uid = ANY($3::bigint[]))
		RETURNING m.uid`, mailboxID, int64(uidValidity), uids)
	if err != nil {
		return nil, translate(err, "settle moved mails")
	}
	var settled []uint32
	for rows.Next() {
		var u int64
		if err := rows.Scan(&u); err != nil {
			return nil, translate(err, "settle moved mails")
		}
		settled = append(settled, uint32(u))
	}
	return settled, translate(rows.Err(), "settle moved mails")
}
