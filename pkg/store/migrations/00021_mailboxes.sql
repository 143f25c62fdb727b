-- +goose Up
-- The mailbox intake's position in each mailbox folder: the folder's
-- UIDVALIDITY and the highest UID whose mail is finished (moved to the
-- processed or error folder). A new UIDVALIDITY starts over at 0; intake's
-- idempotency on (client, message_id) answers the mails read again.
CREATE TABLE mailbox_positions (
    mailbox_id   text PRIMARY KEY,
    uid_validity bigint NOT NULL,
    last_uid     bigint NOT NULL DEFAULT 0,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- One row per mail the intake has read: what became of it, and how often
-- it failed (a mail that keeps failing goes to the error folder).
CREATE TABLE mailbox_mails (
    mailbox_id   text NOT NULL,
    uid_validity bigint NOT NULL,
    uid          bigint NOT NULL,
    message_id   text NOT NULL,
    -- committed: its documents exist, the move is pending;
    -- processed / failed: moved to the processed / error folder.
    outcome      text NOT NULL CHECK (outcome IN ('pending', 'committed', 'processed', 'failed')),
    failures     integer NOT NULL DEFAULT 0,
    reason       text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (mailbox_id, uid_validity, uid)
);

-- One row per PDF of a mail: the document it became, or why not.
CREATE TABLE mailbox_attachments (
    mailbox_id   text NOT NULL,
    uid_validity bigint NOT NULL,
    uid          bigint NOT NULL,
    attachment   integer NOT NULL,
    message_id   text NOT NULL,
    filename     text NOT NULL,
    outcome      text NOT NULL CHECK (outcome IN ('created', 'replayed', 'refused')),
    log_id       text,
    reason       text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (mailbox_id, uid_validity, uid, attachment),
    FOREIGN KEY (mailbox_id, uid_validity, uid) REFERENCES mailbox_mails ON DELETE CASCADE
);

-- +goose Down
DROP TABLE mailbox_attachments;
DROP TABLE mailbox_mails;
DROP TABLE mailbox_positions;
