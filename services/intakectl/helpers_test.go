package intakectl_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

func repoRoot(t *testing.T) string { return repotest.Root(t) }

// sharedDir returns ../shared/<parts> beside the repository; without it the
// test skips, except under CI=true.
func sharedDir(t *testing.T, parts ...string) string { return repotest.Shared(t, parts...) }

// schemaPool is a migrated schema of its own: its URL (what
// INTAKE_DATABASE_URL points intakectl at) and a pool on it, closed at
// cleanup, for the test's own look at what a command stored.
func schemaPool(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	url := storetest.SchemaURL(t)
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return url, pool
}

// acmeDB is a schema of its own with the client acme, the environment that
// points intakectl at it, and a writer of files in a temporary directory.
func acmeDB(t *testing.T) (*store.Store, map[string]string, func(name, body string) string) {
	t.Helper()
	url, pool := schemaPool(t)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme", Name: "ACME"}))
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	return st, map[string]string{"INTAKE_DATABASE_URL": url}, write
}
