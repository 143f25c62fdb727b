-- +goose Up
-- Upload counts per client and fixed time window, shared by every ingest
-- replica (INTAKE_UPLOAD_RATE_LIMIT). UNLOGGED: a counter lost in a crash
-- only lets a client start its window afresh.
CREATE UNLOGGED TABLE upload_rate (
    client_id    text NOT NULL,
    window_start timestamptz NOT NULL,
    n            integer NOT NULL,
    PRIMARY KEY (client_id, window_start)
);

-- +goose Down
DROP TABLE upload_rate;
