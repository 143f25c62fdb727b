package pgcluster

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func needBinaries(t *testing.T) {
	t.Helper()
	if _, err := BinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI installs PostgreSQL: %v", err)
		}
		t.Skip(err.Error())
	}
}

// clusterDir is a data directory the server's account can reach when the
// test runs as root (the server then runs as another account).
func clusterDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	for d := base; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	return filepath.Join(base, "postgres")
}

func start(t *testing.T, dir, password string) *Cluster {
	t.Helper()
	log, err := os.Create(filepath.Join(filepath.Dir(dir), "postgres.log"))
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	c, err := Start(t.Context(), dir, password, log)
	if err != nil {
		b, _ := os.ReadFile(log.Name())
		t.Fatalf("start: %v\n%s", err, b)
	}
	t.Cleanup(func() { require.NoError(t, c.Stop()) })
	return c
}

func connect(t *testing.T, u string) error {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), u)
	if err == nil {
		conn.Close(t.Context())
	}
	return err
}

func socketURL(dir string, port int, password string) string {
	userinfo := "postgres"
	if password != "" {
		userinfo += ":" + password
	}
	return fmt.Sprintf("postgres://%s@/docintake?host=%s&port=%d&sslmode=disable", userinfo, url.QueryEscape(dir), port)
}

// The private server inherits none of standalone's environment: its
// secrets (the ops token, the NATS token) were readable in the
// postmaster's /proc/<pid>/environ by anyone with the server's account,
// which on Debian is the host's shared postgres account.
func TestServerEnvironmentHasNoSecrets(t *testing.T) {
	needBinaries(t)
	t.Setenv("INTAKE_OPS_TOKEN", "ops-token-must-not-leak-0123456789")
	t.Setenv("INTAKE_NATS_URL", "nats://nats-token-must-not-leak@127.0.0.1:4222")
	dir := clusterDir(t)
	start(t, dir, "0123456789abcdef")
	pidFile, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.Split(string(pidFile), "\n")[0])
	require.NoError(t, err)
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	require.NoError(t, err)
	require.NotContains(t, string(environ), "must-not-leak")
	for _, kv := range bytes.Split(environ, []byte{0}) {
		require.False(t, bytes.HasPrefix(kv, []byte("INTAKE_")), "the server's environment holds %s", bytes.SplitN(kv, []byte("="), 2)[0])
	}
	require.Contains(t, strings.Split(string(environ), "\x00"), "LC_ALL=C")
}

// Every connection needs the password, over the unix socket too: with
// "local all all trust" any process of the server's account walked in as
// superuser.
func TestSocketNeedsPassword(t *testing.T) {
	needBinaries(t)
	dir := clusterDir(t)
	c := start(t, dir, "0123456789abcdef")
	for _, u := range []string{socketURL(dir, c.Port, ""), socketURL(dir, c.Port, "0123456789abcdee"),
		fmt.Sprintf("postgres://postgres@127.0.0.1:%d/docintake?sslmode=disable", c.Port)} {
		require.ErrorContains(t, connect(t, u), "password authentication failed", u)
	}
	require.NoError(t, connect(t, socketURL(dir, c.Port, "0123456789abcdef")))
	require.NoError(t, connect(t, c.URL))
	hba, err := os.ReadFile(filepath.Join(dir, "pg_hba.conf"))
	require.NoError(t, err)
	require.NotContains(t, string(hba), "trust")
}

// A cluster made by an earlier release (initdb --auth=trust, no password
// of its own), or one whose password file was replaced, takes the password
// the caller gives at the next start; the old one no longer works.
func TestRestartTakesNewPassword(t *testing.T) {
	needBinaries(t)
	dir := clusterDir(t)
	c := start(t, dir, "0123456789abcdef")
	require.NoError(t, c.Stop())
	c = start(t, dir, "fedcba9876543210")
	require.ErrorContains(t, connect(t, socketURL(dir, c.Port, "0123456789abcdef")), "password authentication failed")
	require.NoError(t, connect(t, socketURL(dir, c.Port, "fedcba9876543210")))
	_, err := os.Stat(filepath.Join(filepath.Dir(dir), ".postgres.initdb-password"))
	require.ErrorIs(t, err, os.ErrNotExist, "initdb's copy of the password is deleted")
}
