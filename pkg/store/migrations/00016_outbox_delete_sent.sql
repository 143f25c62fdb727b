-- +goose Up
-- The relay now deletes an outbox row once it is published instead of
-- setting sent_at, so the outbox holds only what is still to be published.
-- The rows earlier releases marked sent were never removed: delete them
-- once. (A relay of an older release still running during a rolling
-- upgrade marks a few more; the new relays skip them like these.)
DELETE FROM outbox WHERE sent_at IS NOT NULL;
-- Every row is unsent now, so the partial index of unsent rows only
-- duplicated the primary key, at one more index insertion per row (two
-- per document): the relays' claims walk the primary key.
DROP INDEX outbox_unsent;

-- +goose Down
-- Published rows are gone for good; the index comes back.
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
