-- +goose Up
-- Processor bookkeeping, reset whenever an operator re-queues a document:
--   process_seq  number of the newest process job (ProcessJob.attempt); a job
--                carrying a lower number was superseded (sweeper, re-queue)
--                and is dropped, so a document is worked on by one job;
--   failures     failed attempts (unreadable PDF, deadline, crash) since the
--                last (re)queue, counted against INTAKE_PROCESSOR_MAX_FAILURES;
--   deferrals    deferrals for a missing mapping since the last (re)queue,
--                the index into INTAKE_PROCESSOR_RETRY_SCHEDULE;
--   retry_at     when a deferred document is due again; the sweeper
--                re-publishes it when its job has not come back by then.
ALTER TABLE documents
    ADD COLUMN process_seq integer NOT NULL DEFAULT 1,
    ADD COLUMN failures    integer NOT NULL DEFAULT 0,
    ADD COLUMN deferrals   integer NOT NULL DEFAULT 0,
    ADD COLUMN retry_at    timestamptz;
CREATE INDEX documents_deferred_retry ON documents (retry_at) WHERE state = 'deferred_for_retry';

-- +goose Down
DROP INDEX documents_deferred_retry;
ALTER TABLE documents
    DROP COLUMN retry_at,
    DROP COLUMN deferrals,
    DROP COLUMN failures,
    DROP COLUMN process_seq;
