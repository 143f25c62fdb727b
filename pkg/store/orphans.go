package store

import (
	"context"
	"time"
)

// KnownSourceKeys returns which of keys are a document's source object
// (documents_source_key answers each by index).
func (s *Store) KnownSourceKeys(ctx context.Context, keys []string) (map[string]bool, error) {
	rows, err := s.db.Query(ctx, `SELECT source_key FROM documents WHERE source_key = ANY($1::text[])`, nonNil(keys))
	if err != nil {
		return nil, translate(err, "known source keys")
	}
	defer rows.Close()
	known := map[string]bool{}
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return nil, translate(err, "known source keys")
		}
		known[key] = true
	}
	return known, translate(rows.Err(), "known source keys")
}

// RecordOrphanRemoved notes that the object key was removed as an orphan;
// first is false when another replica recorded it already.
func (s *Store) RecordOrphanRemoved(ctx context.Context, key string) (first bool, err error) {
	tag, err := s.db.Exec(ctx, `INSERT INTO orphan_objects (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, key)
	if err != nil {
		return false, translate(err, "record orphan")
	}
	return tag.RowsAffected() == 1, nil
}

// OrphanCounts are the source objects removed as orphans.
type OrphanCounts struct {
	Total   int
	LastDay int // in the 24 hours before the database's now()
	Last    time.Time
}

// OrphansRemoved counts the orphans removed so far.
func (s *Store) OrphansRemoved(ctx context.Context) (OrphanCounts, error) {
	var c OrphanCounts
	var last *time.Time
	if err := s.db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE removed_at > now() - interval '1 day'),
		max(removed_at) FROM orphan_objects`).Scan(&c.Total, &c.LastDay, &last); err != nil {
		return c, translate(err, "count orphans")
	}
	if last != nil {
		c.Last = *last
	}
	return c, nil
}
