-- +goose Up
-- Templates are data (DESIGN.md "Templates are data"): one row per template
-- and scope (client_id NULL = global), pointing at its current version;
-- versions are immutable and only ever appended.
CREATE TABLE templates (
    id              bigserial PRIMARY KEY,
    name            text NOT NULL CHECK (name <> ''),
    client_id       text REFERENCES clients (id) ON DELETE CASCADE,
    current_version integer NOT NULL,
    enabled         boolean NOT NULL DEFAULT true,
    -- A client's DELETE hides the template but keeps its history; a later
    -- push revives it with the next version.
    deleted         boolean NOT NULL DEFAULT false,
    -- party_ids of the current version, so a push can refuse a party id
    -- that another template of the same scope claims.
    party_ids       text[] NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    last_used_at    timestamptz
);
CREATE UNIQUE INDEX templates_scope_name ON templates (coalesce(client_id, ''), name);

CREATE TABLE template_versions (
    template_id bigint NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
    version     integer NOT NULL CHECK (version > 0),
    -- The file as pushed (YAML or JSON) and its SHA-256.
    filename    text NOT NULL,
    content     bytea NOT NULL,
    sha256      bytea NOT NULL CHECK (length(sha256) = 32),
    party_ids   text[] NOT NULL DEFAULT '{}',
    comment     text NOT NULL DEFAULT '',
    pushed_by   text NOT NULL,
    -- The push skipped failing samples (--force).
    forced      boolean NOT NULL DEFAULT false,
    pushed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (template_id, version)
);

-- The regression samples pushed with a version (NAME.samples/X.pdf|txt and
-- X.json), immutable like it.
CREATE TABLE template_samples (
    template_id bigint NOT NULL,
    version     integer NOT NULL,
    name        text NOT NULL,
    content     bytea NOT NULL,
    PRIMARY KEY (template_id, version, name),
    FOREIGN KEY (template_id, version) REFERENCES template_versions (template_id, version) ON DELETE CASCADE
);

-- +goose StatementBegin
CREATE FUNCTION template_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'template versions are immutable' USING ERRCODE = 'check_violation';
END $$;
-- +goose StatementEnd
CREATE TRIGGER template_versions_immutable BEFORE UPDATE ON template_versions
    FOR EACH ROW EXECUTE FUNCTION template_versions_immutable();
CREATE TRIGGER template_samples_immutable BEFORE UPDATE ON template_samples
    FOR EACH ROW EXECUTE FUNCTION template_versions_immutable();

-- Every change of the catalogue (push, rollback, enable, disable, delete)
-- updates its templates row; running services LISTEN on this channel and
-- reload within a moment. The payload is the schema, so services sharing a
-- database in different schemas ignore each other's changes.
-- +goose StatementBegin
CREATE FUNCTION templates_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('docintake_templates', current_schema());
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER templates_notify AFTER INSERT OR DELETE
    OR UPDATE OF current_version, enabled, deleted, party_ids ON templates
    FOR EACH ROW EXECUTE FUNCTION templates_notify();

-- One row per processing attempt of a document: the template version it is
-- pinned to. The first delivery of an attempt pins the version current at
-- that moment; every later delivery of the same attempt (redelivery,
-- deferral, a second processor) uses the pinned one, so a document is never
-- processed with two versions. A reprocess starts the next attempt.
ALTER TABLE documents ADD COLUMN attempt integer NOT NULL DEFAULT 1;
CREATE TABLE document_attempts (
    document_id      uuid NOT NULL REFERENCES documents (id),
    attempt          integer NOT NULL,
    template_id      bigint NOT NULL REFERENCES templates (id),
    template         text NOT NULL,
    template_client  text,
    template_version integer NOT NULL,
    template_sha256  bytea NOT NULL,
    started_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (document_id, attempt)
);
CREATE INDEX document_attempts_template ON document_attempts (template_id, template_version, started_at);

-- +goose Down
DROP TABLE document_attempts;
ALTER TABLE documents DROP COLUMN attempt;
DROP TRIGGER templates_notify ON templates;
DROP FUNCTION templates_notify();
DROP TABLE template_samples;
DROP TABLE template_versions;
DROP FUNCTION template_versions_immutable();
DROP TABLE templates;
