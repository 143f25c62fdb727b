package store

import (
	"database/sql"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// MigrationProvider is a goose provider over the embedded migrations on
// pool's schema, for tests that migrate to a version (Migrate only goes up
// to the newest). Close the returned db after use.
func MigrationProvider(pool *pgxpool.Pool) (*goose.Provider, *sql.DB, error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, nil, err
	}
	db := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return p, db, nil
}

// OnCreateQueued has f called with the queue's length each time a
// CreateDocument call queues for a group statement (under the queue's lock:
// f must not block).
func (s *Store) OnCreateQueued(f func(n int)) {
	s.creates.mu.Lock()
	defer s.creates.mu.Unlock()
	s.creates.queued = f
}
