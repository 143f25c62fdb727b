package store

import (
	"context"
	"errors"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// POIdentity identifies a purchase order across documents: the client,
// the buyer (the template's party, the buyer id read from the order, or the
// template name) and the buyer's order id (migration 00020).
type POIdentity struct {
	ClientID, Buyer, OrderID string
}

// PODelivery is the latest delivered version of a purchase order.
type PODelivery struct {
	POIdentity
	// Revision is 0 for the original ORDER and n for the n-th ORDERCHANGE.
	Revision      int
	ContentSHA256 []byte
	// Canonical is the canonical order as JSON (what a revision is
	// compared with).
	Canonical  []byte
	DocumentID string
	LogID      string
	// FirstLogID is the document that started this series of revisions.
	FirstLogID  string
	DeliveredAt time.Time
	// Live reports whether DeliveredAt lies within the client's
	// duplicate_window_days; a PO delivered before that is a new order.
	// LatestPO fills it.
	Live bool
}

// DefaultDuplicateWindowDays is clients.duplicate_window_days when a client
// does not set it.
const DefaultDuplicateWindowDays = 90

// ErrPOMoved is wrapped by DeliverPO's ECONFLICT when another document was
// recorded as the PO's latest delivery since prev was read: the caller reads
// the PO again and decides anew (duplicate, revision).
var ErrPOMoved = errors.New("purchase order delivered by another document meanwhile")

// LatestPO returns the latest delivery of id; ok is false when the PO was
// never delivered (or its document is gone).
func (s *Store) LatestPO(ctx context.Context, id POIdentity) (d PODelivery, ok bool, err error) {
	const q = `SELECT p.revision, p.content_sha256, p.canonical::text, p.document_id::text, p.log_id, p.first_log_id,
			p.delivered_at, p.delivered_at > now() - make_interval(days => c.duplicate_window_days)
		FROM po_identities p JOIN clients c ON c.id = p.client_id
		WHERE p.client_id = $1 AND p.buyer = $2 AND p.order_id = $3`
	d.POIdentity = id
	var canonical string
	err = s.db.QueryRow(ctx, q, id.ClientID, id.Buyer, id.OrderID).Scan(&d.Revision, &d.ContentSHA256, &canonical,
		&d.DocumentID, &d.LogID, &d.FirstLogID, &d.DeliveredAt, &d.Live)
	if errors.Is(err, pgx.ErrNoRows) {
		return PODelivery{}, false, nil
	}
	if err != nil {
		return PODelivery{}, false, translate(err, "latest purchase order")
	}
	d.Canonical = []byte(canonical)
	return d, true, nil
}

// DeliverPO records d as its PO's latest delivery and applies c (the
// document's processed_success) in one transaction, provided the latest
// delivery is still prev (nil: the PO has none). The primary key and the
// compare-and-set on prev's log_id make concurrent deliveries of one PO
// take turns: the second waits for the first to commit and then fails with
// ECONFLICT wrapping ErrPOMoved, and nothing of it is written. Other errors
// as Transition.
func (s *Store) DeliverPO(ctx context.Context, d PODelivery, prev *PODelivery, c Change) (document.Document, error) {
	var out document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		if err := tx.recordPO(ctx, d, prev); err != nil {
			return err
		}
		var err error
		out, err = tx.Transition(ctx, c)
		return err
	})
	return out, err
}

func (s *Store) recordPO(ctx context.Context, d PODelivery, prev *PODelivery) error {
	var q string
	args := []any{d.ClientID, d.Buyer, d.OrderID, d.Revision, d.ContentSHA256, string(d.Canonical), d.DocumentID,
		d.LogID, d.FirstLogID}
	if prev == nil {
		q = `INSERT INTO po_identities (client_id, buyer, order_id, revision, content_sha256, canonical, document_id,
				log_id, first_log_id)
			VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9) ON CONFLICT DO NOTHING`
	} else {
		q = `UPDATE po_identities SET revision = $4, content_sha256 = $5, canonical = $6::jsonb, document_id = $7,
				log_id = $8, first_log_id = $9, delivered_at = now()
			WHERE client_id = $1 AND buyer = $2 AND order_id = $3 AND log_id = $10`
		args = append(args, prev.LogID)
	}
	tag, err := s.db.Exec(ctx, q, args...)
	if err != nil {
		return translate(err, "record purchase order")
	}
	if tag.RowsAffected() == 0 {
		return &document.Error{Kind: document.ECONFLICT, Code: document.ECONFLICT,
			Message: "order " + d.OrderID + " of buyer " + d.Buyer, Err: ErrPOMoved}
	}
	return nil
}

// SetDuplicateWindow sets how many days a client's delivered POs count for
// duplicates and revisions (0 turns the check off). Returns ENOTFOUND for
// an unknown client, EINVALID for a negative number.
func (s *Store) SetDuplicateWindow(ctx context.Context, clientID string, days int) error {
	if days < 0 {
		return document.Errorf(document.EINVALID, "duplicate window must be 0 or more days, not %d", days)
	}
	tag, err := s.db.Exec(ctx, `UPDATE clients SET duplicate_window_days = $2, updated_at = now() WHERE id = $1`, clientID, days)
	if err != nil {
		return translate(err, "set duplicate window")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s not found", clientID)
	}
	return nil
}

// DuplicateWindow returns a client's duplicate_window_days. Returns
// ENOTFOUND for an unknown client.
func (s *Store) DuplicateWindow(ctx context.Context, clientID string) (int, error) {
	var days int
	if err := s.db.QueryRow(ctx, `SELECT duplicate_window_days FROM clients WHERE id = $1`, clientID).Scan(&days); err != nil {
		return 0, translate(err, "client "+clientID)
	}
	return days, nil
}
