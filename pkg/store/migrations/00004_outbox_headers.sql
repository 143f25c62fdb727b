-- +goose Up
-- Message headers to publish with an outbox row: the W3C trace context of
-- the request that wrote it, so the trace continues in the worker that
-- consumes the job. NULL: no headers.
ALTER TABLE outbox ADD COLUMN headers jsonb;

-- +goose Down
ALTER TABLE outbox DROP COLUMN headers;
