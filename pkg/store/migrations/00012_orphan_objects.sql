-- +goose Up
-- Source objects removed because no document refers to them (an upload
-- killed between the object store write and the commit), for
-- `intakectl status`. The key is the primary key, so replicas that remove
-- the same orphan count it once.
CREATE TABLE orphan_objects (
    key        text PRIMARY KEY,
    removed_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE orphan_objects;
