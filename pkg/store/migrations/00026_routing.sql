-- +goose Up
-- Issue 29: a document may arrive without template or party_id (a mail from
-- a sender no mapping names, an upload of a client that opts in); its
-- template is then chosen by the routing chain (sender mapping, keywords,
-- generic reader). Such a document is stored with template '' until the
-- processor routes it. HTTP uploads keep the contract's 422 for "neither
-- template nor party_id" unless the client sets route_unaddressed.
ALTER TABLE clients ADD COLUMN route_unaddressed boolean NOT NULL DEFAULT false;

-- The sender mapping (kind 'sender': address or domain → party_id) is
-- looked up case-insensitively.
CREATE INDEX mappings_sender_lower ON mappings (client_id, lower(key)) WHERE kind = 'sender';

-- +goose Down
DROP INDEX mappings_sender_lower;
ALTER TABLE clients DROP COLUMN route_unaddressed;
