package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Token tags of sessions opened for a named operator (the shared token's
// sessions carry an HMAC of that token instead, so changing it ends them).
const (
	// OpsSessionByToken: opened by logging in with the operator's own
	// token; rotating the token ends it (SetOperatorToken).
	OpsSessionByToken = "operator"
	// OpsSessionByProxy: opened for an operator an identity-aware proxy
	// named in the trusted header; valid only while the header names it.
	OpsSessionByProxy = "proxy"
)

// CreateOpsSession records a new ops console session that ends after ttl
// (measured by the database clock), opened for operator ("": the shared
// token). idSHA256 is the SHA-256 of the cookie value; the value itself is
// never stored. Sessions that ended over a day ago are deleted on the way,
// so the table stays small without a janitor.
func (s *Store) CreateOpsSession(ctx context.Context, idSHA256 []byte, tokenTag, operator string, ttl time.Duration) error {
	const q = `WITH purge AS (DELETE FROM ops_sessions WHERE expires_at < now() - interval '1 day')
INSERT INTO ops_sessions (id_sha256, token_tag, expires_at, operator) VALUES ($1, $2, now() + make_interval(secs => $3), $4)`
	var op *string
	if operator != "" {
		op = &operator
	}
	if _, err := s.db.Exec(ctx, q, idSHA256, tokenTag, ttl.Seconds(), op); err != nil {
		return translate(err, "create ops session")
	}
	return nil
}

// OpsSession is an open console session.
type OpsSession struct {
	// TokenTag is what the session was opened with: the shared token's
	// HMAC, OpsSessionByToken or OpsSessionByProxy.
	TokenTag string
	// Operator is the operator it was opened for, as it is now (its
	// client limits may have changed since); nil: the shared token's.
	Operator *Operator
}

// OpenOpsSession returns the session unless it does not exist, was revoked
// or has expired (ok false). A removed operator's sessions are gone.
func (s *Store) OpenOpsSession(ctx context.Context, idSHA256 []byte) (sess OpsSession, ok bool, err error) {
	const q = `SELECT s.token_tag, o.name, o.clients, o.token_sha256 IS NOT NULL, o.created_at
	FROM ops_sessions s LEFT JOIN operators o ON o.name = s.operator
	WHERE s.id_sha256 = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`
	var name *string
	var op Operator
	var hasToken *bool
	var created *time.Time
	err = s.db.QueryRow(ctx, q, idSHA256).Scan(&sess.TokenTag, &name, &op.Clients, &hasToken, &created)
	if err == pgx.ErrNoRows {
		return OpsSession{}, false, nil
	}
	if err != nil {
		return OpsSession{}, false, translate(err, "check ops session")
	}
	if name != nil {
		op.Name, op.HasToken, op.CreatedAt = *name, *hasToken, *created
		sess.Operator = &op
	}
	return sess, true, nil
}

// RevokeOpsSession ends a session at once (logout). Revoking an unknown or
// already revoked session is not an error.
func (s *Store) RevokeOpsSession(ctx context.Context, idSHA256 []byte) error {
	const q = `UPDATE ops_sessions SET revoked_at = now() WHERE id_sha256 = $1 AND revoked_at IS NULL`
	if _, err := s.db.Exec(ctx, q, idSHA256); err != nil {
		return translate(err, "revoke ops session")
	}
	return nil
}
