// Package store is docintake's PostgreSQL adapter: connection pool, embedded
// goose migrations, clients and their tokens, documents with their state
// machine, the event history, the outbox and mappings.
//
// Every state change goes through Transition, which checks the domain's
// transition table and does a compare-and-set on the current state in the
// same statement that appends the event (and, optionally, outbox rows): one
// round trip per state change (BENCHMARKS.md counts them per document).
// pgx errors never leave this package: they are translated to
// document.Error kinds (ENOTFOUND, ECONFLICT, EUNAVAILABLE).
package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrations embed.FS

// dbtx is what both the pool and a transaction offer.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Store runs queries on a pool, or on a transaction inside WithTx.
type Store struct {
	pool *pgxpool.Pool
	db   dbtx
	inTx bool
	// handoff receives committed outbox rows (HandOutboxTo); shared by the
	// Store and every transaction's Store made from it.
	handoff *atomic.Pointer[func([]OutboxRow)]
	// txRows collects the outbox rows a transaction wrote until it commits.
	txRows *[]OutboxRow
	// creates groups concurrent CreateDocument calls into shared statements.
	creates *creates
}

// Connect connects to PostgreSQL at url, applies the migrations and returns
// the store. The caller closes st.Pool().
func Connect(ctx context.Context, url string) (*Store, error) {
	pool, err := Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return New(pool), nil
}

// Open connects a pool to url and checks the connection.
// Returns EUNAVAILABLE when PostgreSQL does not answer.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, document.Errorf(document.EINVALID, "database url: %v", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, &document.Error{Kind: document.EUNAVAILABLE, Code: document.EUNAVAILABLE, Message: "postgres not reachable", Err: err}
	}
	return pool, nil
}

// Migrate applies the embedded migrations. It is safe to call from several
// processes at once: goose's PostgreSQL session locker (an advisory lock)
// serialises them.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations fs: %w", err)
	}
	// The advisory lock serialises replicas migrating the same schema. Its
	// id is derived from the schema, so that migrations of different
	// schemas in one database (every test has its own) do not queue behind
	// one another; probing each second instead of goose's 5 s keeps a
	// replica that waits from waiting long after the holder is done.
	var schema string
	if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("migration schema: %w", err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(schema))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lock.DefaultLockID^int64(h.Sum64())), lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migration locker: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migration provider: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// New returns a Store on pool.
func New(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("store.New: nil pool")
	}
	return &Store{pool: pool, db: pool, handoff: new(atomic.Pointer[func([]OutboxRow)]), creates: new(creates)}
}

// HandOutboxTo makes the store hand every outbox row it writes, once
// committed and with its id, to h: the process's relay, which publishes it
// at once instead of claiming it from the table (a claim is three more
// statements and a WAL flush per batch). h must not block. The rows stay in
// the table until the relay deletes them, so a row whose process dies
// before publishing it is claimed by a relay's poll later. A later call
// replaces h; nil stops the hand-over.
func (s *Store) HandOutboxTo(h func([]OutboxRow)) {
	if h == nil {
		s.handoff.Store(nil)
		return
	}
	s.handoff.Store(&h)
}

// HandsOutbox tells whether a relay takes the outbox rows committed through
// s (HandOutboxTo): a process that writes rows without one would leave its
// jobs to other processes' polls.
func (s *Store) HandsOutbox() bool { return s.handoff.Load() != nil }

// Pool returns the underlying pool (for health checks).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that PostgreSQL answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return &document.Error{Kind: document.EUNAVAILABLE, Code: document.EUNAVAILABLE, Message: "postgres not reachable", Err: err}
	}
	return nil
}

// WithTx runs fn in one transaction with a Store bound to it; fn's error rolls
// back. A nested call reuses the outer transaction.
func (s *Store) WithTx(ctx context.Context, fn func(tx *Store) error) error {
	if s.inTx {
		return fn(s)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return translate(err, "begin")
	}
	defer func() {
		// Roll back even when ctx is cancelled, so the connection returns clean.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tx.Rollback(rctx)
	}()
	var written []OutboxRow
	if err := fn(&Store{pool: s.pool, db: tx, inTx: true, handoff: s.handoff, txRows: &written, creates: s.creates}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return translate(err, "commit")
	}
	if h := s.handoff.Load(); h != nil && len(written) > 0 {
		(*h)(written)
	}
	return nil
}

// translate maps pgx errors to document errors at the adapter boundary.
func translate(err error, op string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &document.Error{Kind: document.ENOTFOUND, Code: document.ENOTFOUND, Message: op + ": not found", Err: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return &document.Error{Kind: document.ECONFLICT, Code: document.ECONFLICT, Message: op + ": already exists", Err: err}
		case "23503", "23514", "22P02", "22001": // fk, check, invalid text repr, too long
			return &document.Error{Kind: document.EINVALID, Code: document.EINVALID, Message: op + ": invalid value", Err: err}
		}
		// Class 08 (connection exception) and 57P0x (shutdown, crash
		// recovery, cannot connect now): the server is going or coming.
		if strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") {
			return &document.Error{Kind: document.EUNAVAILABLE, Code: document.EUNAVAILABLE, Message: op + ": postgres unavailable", Err: err}
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	// A refused or broken connection is an outage, not a bug: callers
	// (ingest answers 503) let the client retry. The chaos harness saw
	// these as 500s while PostgreSQL restarted.
	var connErr *pgconn.ConnectError
	var netErr net.Error
	if pgconn.SafeToRetry(err) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &connErr) ||
		errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return &document.Error{Kind: document.EUNAVAILABLE, Code: document.EUNAVAILABLE, Message: op + ": postgres unavailable", Err: err}
	}
	return fmt.Errorf("%s: %w", op, err)
}
