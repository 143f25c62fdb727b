-- +goose Up
-- The object store keys of the objects a document owns, stored with it so
-- that no service derives a key back from a URI (which depends on the object
-- store's configuration: bucket, filesystem root). The *_path columns keep
-- the URIs that the API shows (source_path, result_path, result_json_path),
-- written together with the keys and never changed.
--   source_key       the uploaded PDF, written by ingest before the INSERT:
--                    every document has one;
--   result_key       the openTRANS XML and
--   result_json_key  the canonical JSON, written by the processor with
--                    processed_success and kept afterwards (a reprocess
--                    overwrites them), so a document in a success state has
--                    both.
ALTER TABLE documents
    ADD COLUMN source_key      text,
    ADD COLUMN result_key      text,
    ADD COLUMN result_json_key text;

-- Backfill from the stored URIs. Every URI docintake has written is
-- objectstore.Store.URI(key) of one of two stores, unchanged since the
-- first release:
--   S3  "s3://<bucket>/<key>": a bucket name has no "/", so the key is all
--       after the bucket (the exact inverse; the bucket is not checked, the
--       URI was written by this deployment);
--   FS  "file://" + url-escaped "<root>/<key>": the root is not known here
--       and may itself contain "sources" or "results", so the key is the
--       last five segments, which have the only shape keys ever had
--       (objectstore.SourceKey, ResultKey: sources|results/YYYY/MM/DD/<name>,
--       <name> a UUID log id with .pdf, .xml or .json); none of those
--       characters is ever percent-escaped, so no decoding is needed.
-- Anything else stays NULL and stops the migration below, rather than
-- storing a wrong key. The function is STABLE (array_to_string is), so
-- PostgreSQL inlines it into the UPDATE; S3 URIs take string functions only
-- (a regex with a capture group cost several times as much per row). The
-- UPDATE rewrites every row once under the ALTER's lock.
-- +goose StatementBegin
CREATE FUNCTION pg_temp.object_key(uri text) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN uri LIKE 's3://%' THEN nullif(substr(uri, nullif(strpos(substr(uri, 6), '/'), 0) + 6), '')
        WHEN uri LIKE 'file://%'
            AND array_to_string((string_to_array(uri, '/'))[cardinality(string_to_array(uri, '/')) - 4:], '/')
                ~ '^(sources|results)/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^/]+$'
            THEN array_to_string((string_to_array(uri, '/'))[cardinality(string_to_array(uri, '/')) - 4:], '/')
    END
$$;
-- +goose StatementEnd
UPDATE documents SET
    source_key = pg_temp.object_key(source_path),
    result_key = pg_temp.object_key(result_path),
    result_json_key = pg_temp.object_key(result_json_path)
WHERE source_path IS NOT NULL OR result_path IS NOT NULL OR result_json_path IS NOT NULL;
DROP FUNCTION pg_temp.object_key(text);

-- +goose StatementBegin
DO $$
DECLARE
    bad record;
BEGIN
    SELECT log_id, source_path, result_path, result_json_path INTO bad FROM documents
    WHERE source_key IS NULL
        OR (result_path IS NOT NULL AND result_key IS NULL)
        OR (result_json_path IS NOT NULL AND result_json_key IS NULL)
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'document % has an object URI that names no key (source %, result %, result json %)',
            bad.log_id, bad.source_path, bad.result_path, bad.result_json_path
            USING HINT = 'keys are read from s3://<bucket>/<key> and file:///<root>/<key> URIs only';
    END IF;
END $$;
-- +goose StatementEnd

ALTER TABLE documents
    ALTER COLUMN source_key SET NOT NULL,
    -- Each key is written with its URI and only with it.
    ADD CONSTRAINT documents_result_key CHECK ((result_key IS NULL) = (result_path IS NULL)),
    ADD CONSTRAINT documents_result_json_key CHECK ((result_json_key IS NULL) = (result_json_path IS NULL)),
    -- A success was processed into both results, and they are kept.
    ADD CONSTRAINT documents_success_results CHECK (
        state NOT IN ('processed_success', 'sent_success', 'finished_success')
        OR (result_key IS NOT NULL AND result_json_key IS NOT NULL));
-- A source object belongs to one document; the orphan collector asks by key.
CREATE UNIQUE INDEX documents_source_key ON documents (source_key);

-- +goose Down
-- The URIs were kept, so going down loses nothing.
DROP INDEX documents_source_key;
ALTER TABLE documents
    DROP CONSTRAINT documents_success_results,
    DROP CONSTRAINT documents_result_json_key,
    DROP CONSTRAINT documents_result_key,
    DROP COLUMN result_json_key,
    DROP COLUMN result_key,
    DROP COLUMN source_key;
