package store

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// TokenHash is the SHA-256 of an access token, the only form stored.
func TokenHash(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// ParseTokenHash decodes a hex SHA-256 as written in a clients file.
// Returns EINVALID unless it is 64 hex digits.
func ParseTokenHash(s string) ([32]byte, error) {
	var h [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return h, document.Errorf(document.EINVALID, "token_sha256 must be 64 hex digits")
	}
	copy(h[:], b)
	return h, nil
}

// UpsertClient creates c or updates its name, webhook, secret,
// unknown_party ("" is reject) and review settings ("" is off, a zero
// timeout the default), and makes tokens (SHA-256s) valid
// for it. Existing tokens stay valid: rotation adds
// the new token first and removes the old one later with DeleteClientToken.
// Returns EINVALID for a malformed id.
func (s *Store) UpsertClient(ctx context.Context, c document.Client, tokens ...[32]byte) error {
	if !document.ValidClientID(c.ID) {
		return document.Errorf(document.EINVALID, "client id %q must match [a-z0-9_-]{1,64}", c.ID)
	}
	unknown, err := document.ParseUnknownParty(string(c.UnknownParty))
	if err != nil {
		return err
	}
	review, err := document.ParseReview(string(c.Review))
	if err != nil {
		return err
	}
	return s.WithTx(ctx, func(tx *Store) error {
		const q = `INSERT INTO clients (id, name, webhook_url, webhook_token, signing_secret, webhook_enabled, unknown_party,
				review, review_timeout_seconds)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, webhook_url = EXCLUDED.webhook_url,
				webhook_token = EXCLUDED.webhook_token, signing_secret = EXCLUDED.signing_secret,
				unknown_party = EXCLUDED.unknown_party, review = EXCLUDED.review,
				review_timeout_seconds = EXCLUDED.review_timeout_seconds, updated_at = now()`
		if _, err := tx.db.Exec(ctx, q, c.ID, c.Name, c.WebhookURL, c.WebhookToken, c.SigningSecret, c.WebhookEnabled, unknown,
			review, reviewSeconds(c.ReviewWait())); err != nil {
			return translate(err, "upsert client")
		}
		for _, h := range tokens {
			const qt = `INSERT INTO client_tokens (token_sha256, client_id) VALUES ($1, $2)
				ON CONFLICT (token_sha256) DO NOTHING`
			tag, err := tx.db.Exec(ctx, qt, h[:], c.ID)
			if err != nil {
				return translate(err, "add client token")
			}
			if tag.RowsAffected() == 0 {
				var owner string
				if err := tx.db.QueryRow(ctx, `SELECT client_id FROM client_tokens WHERE token_sha256 = $1`, h[:]).Scan(&owner); err != nil {
					return translate(err, "check client token")
				}
				if owner != c.ID {
					return document.Errorf(document.ECONFLICT, "a token of client %s is already assigned to another client", c.ID)
				}
			}
		}
		return nil
	})
}

// DeleteClientToken revokes one access token. Returns ENOTFOUND if the
// client has no such token.
func (s *Store) DeleteClientToken(ctx context.Context, clientID string, h [32]byte) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM client_tokens WHERE token_sha256 = $1 AND client_id = $2`, h[:], clientID)
	if err != nil {
		return translate(err, "delete client token")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s has no such token", clientID)
	}
	return nil
}

// ClientByToken authenticates a bearer token. The token is hashed first, so
// the index lookup never sees the secret; the stored hash is then compared in
// constant time. Returns EUNAUTHENTICATED for unknown tokens.
func (s *Store) ClientByToken(ctx context.Context, token string) (document.Client, error) {
	h := TokenHash(token)
	const q = `SELECT t.token_sha256, c.id, c.name, c.webhook_url, c.webhook_token, c.signing_secret, c.webhook_enabled,
			c.unknown_party, c.route_unaddressed
		FROM client_tokens t JOIN clients c ON c.id = t.client_id WHERE t.token_sha256 = $1`
	var stored []byte
	var c document.Client
	err := s.db.QueryRow(ctx, q, h[:]).Scan(&stored, &c.ID, &c.Name, &c.WebhookURL, &c.WebhookToken, &c.SigningSecret, &c.WebhookEnabled,
		&c.UnknownParty, &c.RouteUnaddressed)
	if err != nil {
		if document.ErrorKind(translate(err, "")) == document.ENOTFOUND {
			return document.Client{}, document.Errorf(document.EUNAUTHENTICATED, "invalid access token")
		}
		return document.Client{}, translate(err, "authenticate")
	}
	if subtle.ConstantTimeCompare(stored, h[:]) != 1 {
		return document.Client{}, document.Errorf(document.EUNAUTHENTICATED, "invalid access token")
	}
	return c, nil
}

// clientColumns are what scanClient reads.
const clientColumns = `id, name, webhook_url, webhook_token, signing_secret, webhook_enabled, unknown_party, review,
	review_timeout_seconds, route_unaddressed`

func scanClient(row pgx.Row) (document.Client, error) {
	var c document.Client
	var secs int64
	err := row.Scan(&c.ID, &c.Name, &c.WebhookURL, &c.WebhookToken, &c.SigningSecret, &c.WebhookEnabled, &c.UnknownParty,
		&c.Review, &secs, &c.RouteUnaddressed)
	c.ReviewTimeout = time.Duration(secs) * time.Second
	return c, err
}

// clientOfDocument selects, after a document's columns, its client's
// (clientOfDocumentDest scans them), FROM documents.
const clientOfDocument = `cl.name, cl.webhook_url, cl.webhook_token, cl.signing_secret, cl.webhook_enabled,
		cl.unknown_party, cl.review, cl.review_timeout_seconds
	FROM documents JOIN LATERAL (SELECT name, webhook_url, webhook_token, signing_secret, webhook_enabled, unknown_party,
		review, review_timeout_seconds FROM clients WHERE clients.id = documents.client_id) cl ON true`

func clientOfDocumentDest(c *document.Client, secs *int64) []any {
	return []any{&c.Name, &c.WebhookURL, &c.WebhookToken, &c.SigningSecret, &c.WebhookEnabled, &c.UnknownParty, &c.Review, secs}
}

// reviewSeconds is a review timeout as stored: whole seconds, at least 1.
func reviewSeconds(d time.Duration) int64 { return max(int64((d+time.Second-1)/time.Second), 1) }

// SetReview sets a client's review settings (document.Client.Review and
// ReviewTimeout; a zero timeout is the default). Returns ENOTFOUND for
// unknown ids, EINVALID for an unknown value.
func (s *Store) SetReview(ctx context.Context, id string, review document.Review, timeout time.Duration) error {
	review, err := document.ParseReview(string(review))
	if err != nil {
		return err
	}
	tag, err := s.db.Exec(ctx, `UPDATE clients SET review = $2, review_timeout_seconds = $3, updated_at = now() WHERE id = $1`,
		id, review, reviewSeconds(document.Client{ReviewTimeout: timeout}.ReviewWait()))
	if err != nil {
		return translate(err, "set review")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s not found", id)
	}
	return nil
}

// Client returns one client. Returns ENOTFOUND for unknown ids.
func (s *Store) Client(ctx context.Context, id string) (document.Client, error) {
	c, err := scanClient(s.db.QueryRow(ctx, `SELECT `+clientColumns+` FROM clients WHERE id = $1`, id))
	if err != nil {
		return c, translate(err, fmt.Sprintf("client %s", id))
	}
	return c, nil
}

// DocumentWithClient returns a document with its client in one read (what a
// webhook delivery needs). Returns ENOTFOUND for an unknown document.
func (s *Store) DocumentWithClient(ctx context.Context, documentID string) (document.Document, document.Client, error) {
	var c document.Client
	row := s.db.QueryRow(ctx, `SELECT `+documentColumns+`, `+clientOfDocument+` WHERE documents.id = $1`, documentID)
	var secs int64
	d, err := scanDocument(scanFunc(func(dest ...any) error {
		return row.Scan(append(dest, clientOfDocumentDest(&c, &secs)...)...)
	}))
	if err != nil {
		return d, c, notFound(err, "document %s not found", documentID)
	}
	c.ID, c.ReviewTimeout = d.ClientID, time.Duration(secs)*time.Second
	return d, c, nil
}

// Clients lists all clients ordered by id.
func (s *Store) Clients(ctx context.Context) ([]document.Client, error) {
	rows, err := s.db.Query(ctx, `SELECT `+clientColumns+` FROM clients ORDER BY id`)
	if err != nil {
		return nil, translate(err, "list clients")
	}
	defer rows.Close()
	var out []document.Client
	for rows.Next() {
		c, err := scanClient(rows)
		if err != nil {
			return nil, translate(err, "scan client")
		}
		out = append(out, c)
	}
	return out, translate(rows.Err(), "list clients")
}

// SetUnknownParty sets what the client's uploads with a party_id no
// template claims get (document.UnknownParty). Returns ENOTFOUND for
// unknown ids, EINVALID for an unknown value.
func (s *Store) SetUnknownParty(ctx context.Context, id string, v document.UnknownParty) error {
	v, err := document.ParseUnknownParty(string(v))
	if err != nil {
		return err
	}
	tag, err := s.db.Exec(ctx, `UPDATE clients SET unknown_party = $2, updated_at = now() WHERE id = $1`, id, v)
	if err != nil {
		return translate(err, "set unknown_party")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s not found", id)
	}
	return nil
}

// SetWebhookEnabled enables or disables a client's webhook endpoint.
// Returns ENOTFOUND for unknown ids.
func (s *Store) SetWebhookEnabled(ctx context.Context, id string, enabled bool) error {
	tag, err := s.db.Exec(ctx, `UPDATE clients SET webhook_enabled = $2, updated_at = now() WHERE id = $1`, id, enabled)
	if err != nil {
		return translate(err, "set webhook enabled")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s not found", id)
	}
	return nil
}
