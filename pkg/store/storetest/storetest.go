// Package storetest gives tests a real PostgreSQL: each test gets its own
// freshly migrated schema, dropped when the test ends, so parallel tests and
// parallel runs never collide.
package storetest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultURL is used when INTAKE_TEST_DATABASE_URL is unset: the local
// PostgreSQL with trust authentication.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// URL is the database tests connect to.
func URL() string { return cmp.Or(os.Getenv("INTAKE_TEST_DATABASE_URL"), DefaultURL) }

var (
	probeOnce sync.Once
	probeErr  error
)

func probe() error {
	probeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, URL())
		if err != nil {
			probeErr = err
			return
		}
		probeErr = conn.Ping(ctx)
		_ = conn.Close(ctx)
	})
	return probeErr
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// SchemaURL creates a fresh, migrated schema and returns a database URL whose
// connections use it (search_path), for code under test that opens its own
// pool (services started through their run function). The schema is dropped
// in t.Cleanup. With -short the test is skipped; without it an unreachable
// database fails the test with a message saying how to provide one.
func SchemaURL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping PostgreSQL test in -short mode")
	}
	if err := probe(); err != nil {
		t.Fatalf("PostgreSQL not reachable at %s (set INTAKE_TEST_DATABASE_URL, or run .ci/run which starts one): %v", URL(), err)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := nonIdent.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	schema := fmt.Sprintf("t_%s_%s", name, hex.EncodeToString(rnd[:]))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, URL())
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	// search_path as a URL parameter reaches every connection of every pool
	// built from this URL, including pools the code under test opens itself.
	sep := "?"
	if strings.Contains(URL(), "?") {
		sep = "&"
	}
	u := URL() + sep + "search_path=" + schema
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return u
}

// Pool returns a pool on a fresh migrated schema (see SchemaURL), closed in
// t.Cleanup.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := SchemaURL(t)
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Store returns a Store on a fresh schema.
func Store(t testing.TB) *store.Store {
	t.Helper()
	return store.New(Pool(t))
}

// QueryMap runs a query of two columns and returns its rows as a map from
// the first column to the second (a later duplicate key wins); any error
// fails the test.
func QueryMap[K comparable, V any](t testing.TB, pool *pgxpool.Pool, sql string, args ...any) map[K]V {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("storetest: %s: %v", sql, err)
	}
	defer rows.Close()
	out := map[K]V{}
	for rows.Next() {
		var k K
		var v V
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatalf("storetest: scan %s: %v", sql, err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("storetest: %s: %v", sql, err)
	}
	return out
}
