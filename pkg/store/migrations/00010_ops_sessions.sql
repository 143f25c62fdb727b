-- +goose Up
-- Ops console sessions, kept on the server so that logging out revokes one
-- and each expires, across every ingest replica. Only the SHA-256 of the
-- cookie is stored; token_tag is an HMAC of the ops token the session was
-- opened with, so changing INTAKE_OPS_TOKEN ends every session.
CREATE TABLE ops_sessions (
    id_sha256  bytea PRIMARY KEY,
    token_tag  text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX ops_sessions_expires_at ON ops_sessions (expires_at);

-- +goose Down
DROP TABLE ops_sessions;
