-- +goose Up
-- Leased webhook slots per client, shared by every dispatcher replica, so
-- that INTAKE_WEBHOOK_CLIENT_CONCURRENCY bounds a client's calls in flight
-- system-wide. A dispatcher killed mid-call leaves its slot until the lease
-- ends. holder is a random id per acquisition: a late release never frees a
-- slot someone else took over.
CREATE TABLE webhook_slots (
    client_id    text NOT NULL,
    slot         integer NOT NULL,
    holder       text NOT NULL,
    leased_until timestamptz NOT NULL,
    PRIMARY KEY (client_id, slot)
);

-- +goose Down
DROP TABLE webhook_slots;
