-- +goose Up
-- The mailbox intake's Microsoft Graph source (services/mailintake). A
-- Graph mail folder has no UIDs: its position is the delta link of the
-- last round read to the end (the whole @odata.deltaLink URL, as Graph
-- asks; it holds a sync state, no credential). It is kept beside the IMAP
-- position, under uid_validity 0, which IMAP never uses.
ALTER TABLE mailbox_positions ADD COLUMN delta_link text NOT NULL DEFAULT '';

-- A Graph message is named by an opaque (immutable) id; mailbox_mails and
-- mailbox_attachments name a mail by (uid_validity, uid). Each message id
-- gets its uid here once, so a mail read again after a crash finds its
-- rows, and its outcome, under the same key.
CREATE TABLE mailbox_items (
    mailbox_id   text NOT NULL,
    uid_validity bigint NOT NULL,
    item_id      text NOT NULL,
    uid          bigint NOT NULL CHECK (uid > 0 AND uid <= 4294967295),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (mailbox_id, uid_validity, item_id),
    UNIQUE (mailbox_id, uid_validity, uid)
);

-- +goose Down
DROP TABLE mailbox_items;
ALTER TABLE mailbox_positions DROP COLUMN delta_link;
