package store

import (
	"context"
	"math"
	"time"
)

// TakeUpload counts one upload of the client in the current fixed window of
// length per (aligned to the database clock, so every ingest replica shares
// the window and the count) and reports whether it is within limit. When it
// is not, retryAfter is the time until the window ends, at least a second.
// The client's older windows are deleted on the way. A fixed window lets a
// client send up to 2×limit across a window boundary; that is the price of
// one statement per upload.
func (s *Store) TakeUpload(ctx context.Context, clientID string, limit int, per time.Duration) (ok bool, retryAfter time.Duration, err error) {
	const q = `WITH w AS (SELECT to_timestamp(floor(extract(epoch FROM now()) / $2) * $2) AS start),
purge AS (DELETE FROM upload_rate u USING w WHERE u.client_id = $1 AND u.window_start < w.start)
INSERT INTO upload_rate AS u (client_id, window_start, n) SELECT $1, w.start, 1 FROM w
ON CONFLICT (client_id, window_start) DO UPDATE SET n = u.n + 1
RETURNING u.n, extract(epoch FROM u.window_start + make_interval(secs => $2) - now())::float8`
	var n int
	var left float64
	if err := s.db.QueryRow(ctx, q, clientID, per.Seconds()).Scan(&n, &left); err != nil {
		return false, 0, translate(err, "count upload")
	}
	if n <= limit {
		return true, 0, nil
	}
	return false, time.Duration(max(1, math.Ceil(left))) * time.Second, nil
}
