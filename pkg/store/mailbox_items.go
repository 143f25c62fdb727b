package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// A mailbox read through Microsoft Graph (services/mailintake) has no UIDs:
// its position is a delta link, and its messages get their UIDs here.

// MailboxDeltaLink returns the delta link stored for mailboxID under
// uidValidity; "" before the first round read to the end (or after the
// mailbox was read over IMAP, under another UIDVALIDITY).
func (s *Store) MailboxDeltaLink(ctx context.Context, mailboxID string, uidValidity uint32) (string, error) {
	var link string
	err := s.db.QueryRow(ctx, `SELECT delta_link FROM mailbox_positions WHERE mailbox_id = $1 AND uid_validity = $2`,
		mailboxID, int64(uidValidity)).Scan(&link)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return link, translate(err, "mailbox delta link")
}

// SetMailboxDeltaLink stores mailboxID's delta link under uidValidity; a
// position of another UIDVALIDITY is replaced (from 0).
func (s *Store) SetMailboxDeltaLink(ctx context.Context, mailboxID string, uidValidity uint32, link string) error {
	_, err := s.db.Exec(ctx, `INSERT INTO mailbox_positions (mailbox_id, uid_validity, delta_link) VALUES ($1, $2, $3)
		ON CONFLICT (mailbox_id) DO UPDATE SET delta_link = $3, updated_at = now(),
			uid_validity = $2,
			last_uid = CASE WHEN mailbox_positions.uid_validity = $2 THEN mailbox_positions.last_uid ELSE 0 END`,
		mailboxID, int64(uidValidity), link)
	return translate(err, "set mailbox delta link")
}

// MailboxItemUIDs returns the UID of each item id (in their order), giving
// the ids never seen the next UIDs of the mailbox. Only the mailbox's
// lock holder calls it, so the numbering has one writer; the unique
// constraint refuses a second one rather than sharing a UID.
func (s *Store) MailboxItemUIDs(ctx context.Context, mailboxID string, uidValidity uint32, itemIDs []string) ([]uint32, error) {
	uids := make([]uint32, len(itemIDs))
	err := s.WithTx(ctx, func(tx *Store) error {
		for i, id := range itemIDs {
			var u int64
			err := tx.db.QueryRow(ctx, `WITH known AS (
					SELECT uid FROM mailbox_items WHERE mailbox_id = $1 AND uid_validity = $2 AND item_id = $3),
				added AS (
					INSERT INTO mailbox_items (mailbox_id, uid_validity, item_id, uid)
					SELECT $1, $2, $3, next FROM (SELECT coalesce(max(uid), 0) + 1 AS next FROM mailbox_items
						WHERE mailbox_id = $1 AND uid_validity = $2) n
					WHERE NOT EXISTS (SELECT 1 FROM known)
					RETURNING uid)
				SELECT uid FROM known UNION ALL SELECT uid FROM added`,
				mailboxID, int64(uidValidity), id).Scan(&u)
			if err != nil {
				return translate(err, "mailbox item uid")
			}
			uids[i] = uint32(u)
		}
		return nil
	})
	return uids, err
}
