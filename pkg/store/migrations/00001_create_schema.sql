-- +goose Up
CREATE TABLE clients (
    id              text PRIMARY KEY CHECK (id ~ '^[a-z0-9_-]{1,64}$'),
    name            text NOT NULL DEFAULT '',
    webhook_url     text NOT NULL DEFAULT '',
    webhook_token   text NOT NULL DEFAULT '',
    signing_secret  text NOT NULL DEFAULT '',
    webhook_enabled boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Access tokens are stored only as SHA-256; a client may have several so that
-- tokens rotate without downtime.
CREATE TABLE client_tokens (
    token_sha256 bytea PRIMARY KEY CHECK (length(token_sha256) = 32),
    client_id    text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX client_tokens_client_id ON client_tokens (client_id);

CREATE TABLE documents (
    id               uuid PRIMARY KEY,
    log_id           text NOT NULL UNIQUE,
    client_id        text NOT NULL REFERENCES clients (id),
    message_id       text NOT NULL,
    file_sha256      bytea NOT NULL,
    file_size        bigint NOT NULL,
    filename         text NOT NULL,
    subject          text NOT NULL,
    template         text NOT NULL,
    party_id         text,
    result_mode      text,
    document_date    date,
    source_path      text,
    result_path      text,
    result_json_path text,
    state            text NOT NULL,
    status_reason    text,
    attempts         integer NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- The unique index decides idempotency, also under concurrent uploads.
    CONSTRAINT documents_client_message UNIQUE (client_id, message_id)
);
CREATE INDEX documents_state_updated ON documents (state, updated_at);

-- Append-only history of every state change.
CREATE TABLE document_events (
    id          bigserial PRIMARY KEY,
    document_id uuid NOT NULL REFERENCES documents (id),
    from_state  text,
    to_state    text NOT NULL,
    reason      text,
    actor       text NOT NULL,
    detail      text,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX document_events_document ON document_events (document_id, id);

-- Transactional outbox: rows committed with a state change, published to
-- JetStream by the relay and then marked sent.
CREATE TABLE outbox (
    id         bigserial PRIMARY KEY,
    subject    text NOT NULL,
    msg_id     text NOT NULL,
    payload    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz
);
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;

-- Master-data mappings per client (buyer article → supplier article, buyer
-- address → delivery party id, …), loaded by ops.
CREATE TABLE mappings (
    client_id  text NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    kind       text NOT NULL,
    key        text NOT NULL,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, kind, key)
);

-- +goose Down
DROP TABLE mappings;
DROP TABLE outbox;
DROP TABLE document_events;
DROP TABLE documents;
DROP TABLE client_tokens;
DROP TABLE clients;
