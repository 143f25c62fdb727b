-- +goose Up
-- The mailboxes the mailbox intake reads (services/mailintake): the
-- entries of INTAKE_MAILBOXES_FILE, upserted at every start, and those
-- `intakectl mailboxes add` wrote. config is the entry in the file's YAML
-- form; it names where each secret is (a file or an environment variable),
-- never a secret itself.
CREATE TABLE mailboxes (
    id          text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
    client_id   text NOT NULL REFERENCES clients (id),
    config      text NOT NULL,
    source      text NOT NULL CHECK (source IN ('file', 'cli')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Each mailbox's health as its active poller last saw it, written after
-- every pass: for `intakectl status` and the ops console, which do not
-- reach the pollers' metrics. No foreign key: a mailbox removed keeps its
-- last word until it is added again.
CREATE TABLE mailbox_health (
    mailbox_id            text PRIMARY KEY,
    client_id             text NOT NULL,
    reader                text NOT NULL,          -- host and pid of the poller holding the lock
    last_pass_at          timestamptz NOT NULL,
    last_success_at       timestamptz,
    failed_passes         integer NOT NULL DEFAULT 0,  -- in a row, 0 after a success
    last_error            text NOT NULL DEFAULT '',
    last_error_at         timestamptz,
    unprocessed           integer NOT NULL DEFAULT 0,  -- mails left in the folder after the pass
    oldest_unprocessed_at timestamptz                  -- arrival of the oldest of them
);

-- The status counts the last day's mails and documents of each mailbox.
CREATE INDEX mailbox_mails_recent ON mailbox_mails (mailbox_id, updated_at);
CREATE INDEX mailbox_attachments_recent ON mailbox_attachments (mailbox_id, updated_at);

-- +goose Down
DROP INDEX mailbox_attachments_recent;
DROP INDEX mailbox_mails_recent;
DROP TABLE mailbox_health;
DROP TABLE mailboxes;
