package store

import (
	"context"
	"time"
)

// CreateOpsSession records a new ops console session that ends after ttl
// (measured by the database clock). idSHA256 is the SHA-256 of the cookie
// value; the value itself is never stored. Sessions that ended over a day
// ago are deleted on the way, so the table stays small without a janitor.
func (s *Store) CreateOpsSession(ctx context.Context, idSHA256 []byte, tokenTag string, ttl time.Duration) error {
	const q = `WITH purge AS (DELETE FROM ops_sessions WHERE expires_at < now() - interval '1 day')
INSERT INTO ops_sessions (id_sha256, token_tag, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`
	if _, err := s.db.Exec(ctx, q, idSHA256, tokenTag, ttl.Seconds()); err != nil {
		return translate(err, "create ops session")
	}
	return nil
}

// OpsSessionValid reports whether the session exists, was opened with the
// ops token tagged tokenTag, has not been revoked and has not expired.
func (s *Store) OpsSessionValid(ctx context.Context, idSHA256 []byte, tokenTag string) (bool, error) {
	const q = `SELECT EXISTS (SELECT 1 FROM ops_sessions WHERE id_sha256 = $1 AND token_tag = $2
  AND revoked_at IS NULL AND expires_at > now())`
	var ok bool
	if err := s.db.QueryRow(ctx, q, idSHA256, tokenTag).Scan(&ok); err != nil {
		return false, translate(err, "check ops session")
	}
	return ok, nil
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
