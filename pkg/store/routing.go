package store

import (
	"context"
	"strings"

	"github.com/docintake/docintake/pkg/document"
)

// MappingSender is the mapping kind of the routing chain's first step
// (issue 29): a sender's address or domain → the party_id whose template
// reads its documents. Keys are compared case-insensitively.
const MappingSender = "sender"

// SenderParty returns the party_id the client's sender mapping gives the
// address from (a bare address such as "po@buyer.example"): the exact
// address's entry, else its domain's. key is the entry that matched; ok is
// false when neither has one.
func (s *Store) SenderParty(ctx context.Context, clientID, from string) (key, party string, ok bool, err error) {
	addr := strings.ToLower(strings.TrimSpace(from))
	if addr == "" {
		return "", "", false, nil
	}
	keys := []string{addr}
	if at := strings.LastIndexByte(addr, '@'); at >= 0 {
		keys = append(keys, addr[at+1:])
	}
	// The address (its longer key) wins over its domain.
	err = s.db.QueryRow(ctx, `SELECT key, value FROM mappings WHERE client_id = $1 AND kind = $2 AND lower(key) = ANY($3)
		ORDER BY length(key) DESC, key LIMIT 1`, clientID, MappingSender, keys).Scan(&key, &party)
	if err != nil {
		if document.ErrorKind(translate(err, "")) == document.ENOTFOUND {
			return "", "", false, nil
		}
		return "", "", false, translate(err, "lookup sender mapping")
	}
	return key, party, true, nil
}

// SetRouteUnaddressed sets whether the client's HTTP uploads that name
// neither template nor party_id are routed (issue 29) instead of answered
// 422 as the contract says. Returns ENOTFOUND for unknown ids.
func (s *Store) SetRouteUnaddressed(ctx context.Context, clientID string, on bool) error {
	tag, err := s.db.Exec(ctx, `UPDATE clients SET route_unaddressed = $2, updated_at = now() WHERE id = $1`, clientID, on)
	if err != nil {
		return translate(err, "set route_unaddressed")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s not found", clientID)
	}
	return nil
}

// Route is the routing chain's choice for a document stored without a
// template: Template is what it is read with from now on, Detail the
// history's line saying which step chose it and why.
type Route struct {
	DocumentID string
	State      document.State // the state the document is in (compare-and-set)
	Template   string
	Actor      string
	Detail     string
}

// RouteDocument records r: the document's template and the event, in one
// transaction, only while the document is still in r.State without a
// template. A document another worker routed or moved meanwhile is
// ECONFLICT.
func (s *Store) RouteDocument(ctx context.Context, r Route) error {
	if r.Template == "" {
		return document.Errorf(document.EINVALID, "route of document %s names no template", r.DocumentID)
	}
	return s.WithTx(ctx, func(tx *Store) error {
		tag, err := tx.db.Exec(ctx, `UPDATE documents SET template = $2, updated_at = now()
			WHERE id = $1 AND template = '' AND state = $3`, r.DocumentID, r.Template, r.State)
		if err != nil {
			return translate(err, "route document")
		}
		if tag.RowsAffected() == 0 {
			return document.Errorf(document.ECONFLICT, "document %s was routed or moved meanwhile", r.DocumentID)
		}
		return tx.appendEvent(ctx, r.DocumentID, r.State, r.State, "", r.Actor, r.Detail)
	})
}
