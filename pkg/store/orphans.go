package store

import (
	"context"
	"time"
)

// KnownLogIDs returns which of logIDs name a document.
func (s *Store) KnownLogIDs(ctx context.Context, logIDs []string) (map[string]bool, error) {
	rows, err := s.db.Query(ctx, `SELECT log_id FROM documents WHERE log_id = ANY($1::text[])`, nonNil(logIDs))
	if err != nil {
		return nil, translate(err, "known log ids")
	}
	defer rows.Close()
	known := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, translate(err, "known log ids")
		}
		known[id] = true
	}
	return known, translate(rows.Err(), "known log ids")
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
