-- +goose Up
-- The generic reader (pkg/generic) is a built-in template without stored
-- versions: an attempt pinned to it has no templates row, so template_id is
-- NULL there (template 'generic', version 0). The pin still counts the
-- attempt's starts, which the dlq decision at MaxDeliver relies on.
ALTER TABLE document_attempts ALTER COLUMN template_id DROP NOT NULL;

-- What an upload whose party_id no template claims gets: 'reject' (400
-- template_not_found, as before) or 'generic' (the generic reader).
ALTER TABLE clients ADD COLUMN unknown_party text NOT NULL DEFAULT 'reject'
    CHECK (unknown_party IN ('reject', 'generic'));

-- +goose Down
ALTER TABLE clients DROP COLUMN unknown_party;
DELETE FROM document_attempts WHERE template_id IS NULL;
ALTER TABLE document_attempts ALTER COLUMN template_id SET NOT NULL;
