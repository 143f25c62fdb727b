-- +goose Up
-- Issue 27: a client may hold rejections a person can fix for review
-- instead of delivering them at once; an untouched one is delivered after
-- review_timeout_seconds (default 4 h), so the client never waits forever.
ALTER TABLE clients ADD COLUMN review text NOT NULL DEFAULT 'off' CHECK (review IN ('off', 'hold')),
    ADD COLUMN review_timeout_seconds integer NOT NULL DEFAULT 14400 CHECK (review_timeout_seconds > 0);

-- A held document rests in processed_rejected without its deliver job until
-- review_until: the lost-deliver-job sweep leaves it alone, the review sweep
-- releases it then. NULL: not held.
ALTER TABLE documents ADD COLUMN review_until timestamptz;
CREATE INDEX documents_review_until ON documents (review_until) WHERE review_until IS NOT NULL;

-- +goose Down
DROP INDEX documents_review_until;
ALTER TABLE documents DROP COLUMN review_until;
ALTER TABLE clients DROP COLUMN review_timeout_seconds, DROP COLUMN review;
