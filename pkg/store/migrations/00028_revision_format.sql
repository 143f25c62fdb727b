-- +goose Up
-- Issue 28: how a client's revisions of a delivered PO are delivered: as an
-- openTRANS ORDERCHANGE with its sequence number (the default), or, for an
-- ERP that takes no ORDERCHANGE, as an ORDER whose remarks say it is a
-- revision (sequence number, earlier log_id, what changed).
ALTER TABLE clients ADD COLUMN revisions text NOT NULL DEFAULT 'orderchange'
    CHECK (revisions IN ('orderchange', 'order'));

-- +goose Down
ALTER TABLE clients DROP COLUMN revisions;
