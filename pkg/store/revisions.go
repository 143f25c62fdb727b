package store

import (
	"context"

	"github.com/docintake/docintake/pkg/document"
)

// SetRevisionFormat sets how a client's revisions of a delivered PO are
// delivered (migration 00028). Returns ENOTFOUND for an unknown client,
// EINVALID for an unknown format.
func (s *Store) SetRevisionFormat(ctx context.Context, clientID string, f document.RevisionFormat) error {
	f, err := document.ParseRevisionFormat(string(f))
	if err != nil {
		return err
	}
	tag, err := s.db.Exec(ctx, `UPDATE clients SET revisions = $2, updated_at = now() WHERE id = $1`, clientID, f)
	if err != nil {
		return translate(err, "set revisions")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s not found", clientID)
	}
	return nil
}

// RevisionFormat returns how a client's revisions are delivered. Returns
// ENOTFOUND for an unknown client.
func (s *Store) RevisionFormat(ctx context.Context, clientID string) (document.RevisionFormat, error) {
	var f document.RevisionFormat
	if err := s.db.QueryRow(ctx, `SELECT revisions FROM clients WHERE id = $1`, clientID).Scan(&f); err != nil {
		return "", clientNotFound(err, clientID)
	}
	return f, nil
}

// ApproveReviewPO is ApproveReview for an approved purchase order: in the
// same transaction it records po as its PO's latest delivery, provided the
// latest is still prev (as DeliverPO does for the processor), so that an
// approval and a processor delivering the same PO at once take turns. The
// loser gets ECONFLICT wrapping ErrPOMoved and nothing of it is written:
// the hold stays, and the caller decides again.
func (s *Store) ApproveReviewPO(ctx context.Context, id string, po PODelivery, prev *PODelivery,
	build func(d document.Document) (Change, error)) (document.Document, error) {
	return s.approveReview(ctx, id, func(tx *Store) error { return tx.recordPO(ctx, po, prev) }, build)
}
