-- +goose Up
-- One row per webhook delivery: one outcome (or notification) of a document
-- announced to the client. Its id is the Standard Webhooks webhook-id, the
-- same for every attempt, so the client can drop duplicates. Retries are
-- scheduled here (next_attempt_at), not in JetStream, so a client that is
-- down for hours holds no broker resources and cannot starve other clients.
CREATE TABLE deliveries (
    id              text PRIMARY KEY,
    document_id     uuid NOT NULL REFERENCES documents (id),
    client_id       text NOT NULL REFERENCES clients (id),
    log_id          text NOT NULL,
    -- Document state being reported and the webhook status that goes with it.
    state           text NOT NULL,
    status          text NOT NULL,
    -- pending | delivered | failed | superseded | skipped
    outcome         text NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    -- Failed attempts that count against the retry schedule (410 does not).
    failures        integer NOT NULL DEFAULT 0,
    -- Incremented whenever the scheduler republishes the job; job messages
    -- carrying an older claim are stale copies and are dropped.
    claim           integer NOT NULL DEFAULT 1,
    -- When the scheduler should (re)publish the job if nothing else happened.
    next_attempt_at timestamptz,
    -- An attempt in flight holds the delivery until then.
    leased_until    timestamptz,
    last_error      text,
    redelivery_of   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz
);
CREATE INDEX deliveries_document ON deliveries (document_id, created_at);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE outcome = 'pending';

-- Every HTTP attempt of a delivery.
CREATE TABLE delivery_attempts (
    id          bigserial PRIMARY KEY,
    delivery_id text NOT NULL REFERENCES deliveries (id),
    n           integer NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    status_code integer,
    latency_ms  double precision NOT NULL,
    error       text,
    body_prefix text,
    UNIQUE (delivery_id, n)
);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
