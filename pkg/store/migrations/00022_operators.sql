-- +goose Up
-- Issue 27 "Who did it": named ops console operators instead of one shared
-- token. An operator logs in with a token of its own (only its SHA-256 is
-- stored, as for clients; NULL: none, the operator is known only through
-- an identity-aware proxy's trusted header), and may be limited to some
-- clients (NULL: every client). 'ops-console' is the shared
-- INTAKE_OPS_TOKEN's name in the history, so no account may take it.
CREATE TABLE operators (
    name         text PRIMARY KEY
        CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$' AND name <> 'ops-console'),
    token_sha256 bytea UNIQUE CHECK (octet_length(token_sha256) = 32),
    clients      text[] CHECK (cardinality(clients) > 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- A session names the operator it was opened for (NULL: the shared
-- token's); removing an operator ends its sessions with it.
ALTER TABLE ops_sessions ADD COLUMN operator text REFERENCES operators (name) ON DELETE CASCADE;
CREATE INDEX ops_sessions_operator ON ops_sessions (operator) WHERE operator IS NOT NULL;

-- +goose Down
DROP INDEX ops_sessions_operator;
ALTER TABLE ops_sessions DROP COLUMN operator;
DROP TABLE operators;
