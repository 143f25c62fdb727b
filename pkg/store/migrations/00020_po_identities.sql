-- +goose Up
-- The latest delivered version of each purchase order (issue 28): a PO is
-- identified by client, buyer and order id. The processor records a
-- success here in the same transaction as the document's processed_success,
-- and the primary key decides between two copies processed at the same
-- moment: the second insert waits for the first and then finds the row, so
-- exactly one of them becomes the ORDER and the other a duplicate (or a
-- revision when its content differs).
CREATE TABLE po_identities (
    client_id      text NOT NULL REFERENCES clients(id) ON DELETE CASCADE,
    buyer          text NOT NULL,
    order_id       text NOT NULL,
    -- 0 for the original ORDER, n for the n-th ORDERCHANGE.
    revision       integer NOT NULL CHECK (revision >= 0),
    content_sha256 bytea NOT NULL CHECK (length(content_sha256) = 32),
    -- The canonical order (processor's canonical JSON), to say what a
    -- revision changed line by line.
    canonical      jsonb NOT NULL,
    document_id    uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    log_id         text NOT NULL,
    -- The document that started this series of revisions.
    first_log_id   text NOT NULL,
    delivered_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, buyer, order_id)
);
CREATE INDEX po_identities_document ON po_identities (document_id);

-- How long (days) a delivered PO counts for duplicates and revisions: a PO
-- with the same identity delivered earlier than this is a new order. 0
-- turns the check off.
ALTER TABLE clients ADD COLUMN duplicate_window_days integer NOT NULL DEFAULT 90
    CHECK (duplicate_window_days >= 0);

-- +goose Down
ALTER TABLE clients DROP COLUMN duplicate_window_days;
DROP TABLE po_identities;
