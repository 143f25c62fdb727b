-- +goose Up
-- How many times a worker started each processing attempt (the template pin
-- runs at every start). JetStream's delivery count also counts deliveries
-- into a processor's fair window that no worker started, which a processor
-- kill sends back all at once; only starts tell a document that kills or
-- hangs its worker from one that merely waited behind others.
ALTER TABLE document_attempts ADD COLUMN starts integer NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE document_attempts DROP COLUMN starts;
