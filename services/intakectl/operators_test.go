package intakectl_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// intakectl operators: add prints a token once and stores its SHA-256,
// list shows names, limits and whether a token exists (never the token),
// rotate replaces the token, set changes the limits, remove deletes.
func TestOperatorsCommands(t *testing.T) {
	t.Parallel()
	url, pool := schemaPool(t)
	env := map[string]string{"INTAKE_DATABASE_URL": url}
	st := store.New(pool)
	for _, id := range []string{"acme", "globex"} {
		require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: id}))
	}

	r := runEnv(t, env, "operators", "add", "alice")
	require.Equal(t, 0, r.code, r.stderr)
	tok := strings.TrimSpace(r.stdout)
	require.True(t, strings.HasPrefix(tok, "dio_"), tok)
	op, err := st.OperatorByToken(t.Context(), tok)
	require.NoError(t, err)
	require.Equal(t, "alice", op.Name)
	require.Nil(t, op.Clients, "no --clients: every client")
	var stored []byte
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT token_sha256 FROM operators WHERE name = 'alice'`).Scan(&stored))
	sum := sha256.Sum256([]byte(tok))
	require.Equal(t, sum[:], stored, "only the SHA-256 is stored")

	r = runEnv(t, env, "operators", "add", "bob", "--clients", "acme,globex")
	require.Equal(t, 0, r.code, r.stderr)
	r = runEnv(t, env, "operators", "add", "erin@example.com", "--no-token", "--clients", "globex")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout, "no token, nothing printed")

	for _, bad := range [][]string{{"add", "alice"}, {"add", "ops-console"}, {"add", "has space"}, {"add", "x", "--clients", "nosuch"}} {
		r = runEnv(t, env, append([]string{"operators"}, bad...)...)
		require.Equal(t, 1, r.code, bad)
	}
	require.Contains(t, runEnv(t, env, "operators", "add", "x", "--clients", "acme,nosuch").stderr, "no such client: nosuch")
	require.Equal(t, 2, runEnv(t, env, "operators", "add").code)
	require.Equal(t, 2, runEnv(t, env, "operators", "set", "bob").code, "set needs --clients")

	r = runEnv(t, env, "operators", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^NAME\s+CLIENTS\s+TOKEN\s+CREATED$`, r.stdout)
	require.Regexp(t, `(?m)^alice\s+all\s+yes\s`, r.stdout)
	require.Regexp(t, `(?m)^bob\s+acme,globex\s+yes\s`, r.stdout)
	require.Regexp(t, `(?m)^erin@example.com\s+globex\s+no \(proxy only\)\s`, r.stdout)
	require.NotContains(t, r.stdout, tok)

	r = runEnv(t, env, "operators", "rotate", "alice")
	require.Equal(t, 0, r.code, r.stderr)
	tok2 := strings.TrimSpace(r.stdout)
	require.NotEqual(t, tok, tok2)
	_, err = st.OperatorByToken(t.Context(), tok)
	require.Equal(t, document.EUNAUTHENTICATED, document.ErrorKind(err), "the old token no longer logs in")
	_, err = st.OperatorByToken(t.Context(), tok2)
	require.NoError(t, err)

	require.Equal(t, 0, runEnv(t, env, "operators", "set", "bob", "--clients", "acme").code)
	op, err = st.Operator(t.Context(), "bob")
	require.NoError(t, err)
	require.Equal(t, []string{"acme"}, op.Clients)
	require.Equal(t, 0, runEnv(t, env, "operators", "set", "bob", "--clients", "all").code)
	op, err = st.Operator(t.Context(), "bob")
	require.NoError(t, err)
	require.Nil(t, op.Clients)

	require.Equal(t, 0, runEnv(t, env, "operators", "remove", "alice").code)
	require.Equal(t, 1, runEnv(t, env, "operators", "remove", "alice").code, "removed already")
	_, err = st.OperatorByToken(t.Context(), tok2)
	require.Equal(t, document.EUNAUTHENTICATED, document.ErrorKind(err))
	r = runEnv(t, env, "operators", "list")
	require.NotRegexp(t, `(?m)^alice\s`, r.stdout)
	require.Equal(t, 1, runEnv(t, env, "operators", "rotate", "alice").code)
}

// intakectl clients set changes only the settings it is given; clients
// show prints them (defaults: review off, 4h, 90 days).
func TestClientsSet(t *testing.T) {
	t.Parallel()
	url, pool := schemaPool(t)
	env := map[string]string{"INTAKE_DATABASE_URL": url}
	require.Equal(t, 0, runEnv(t, env, "clients", "add", "--id", "acme", "--webhook-url", "https://erp.example/hook").code)

	r := runEnv(t, env, "clients", "show", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^review:\s+off$`, r.stdout)
	require.Regexp(t, `(?m)^review_timeout:\s+4h0m0s$`, r.stdout)
	require.Regexp(t, `(?m)^duplicate_window_days:\s+90$`, r.stdout)

	r = runEnv(t, env, "clients", "set", "acme", "--review", "hold", "--review-timeout", "30m")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^review:\s+hold$`, r.stdout)

	st := store.New(pool)
	c, err := st.Client(t.Context(), "acme")
	require.NoError(t, err)
	require.Equal(t, document.ReviewHold, c.Review)
	require.Equal(t, 30*time.Minute, c.ReviewTimeout)

	require.Equal(t, 0, runEnv(t, env, "clients", "set", "acme", "--duplicate-window-days", "0").code)
	days, err := st.DuplicateWindow(t.Context(), "acme")
	require.NoError(t, err)
	require.Zero(t, days)
	c, err = st.Client(t.Context(), "acme")
	require.NoError(t, err)
	require.Equal(t, document.ReviewHold, c.Review, "settings not given stay")
	require.Equal(t, 30*time.Minute, c.ReviewTimeout)

	require.Equal(t, 0, runEnv(t, env, "clients", "set", "acme", "--review", "off").code)
	c, err = st.Client(t.Context(), "acme")
	require.NoError(t, err)
	require.Equal(t, document.ReviewOff, c.Review)
	require.Equal(t, 30*time.Minute, c.ReviewTimeout)

	r = runEnv(t, env, "clients", "list")
	require.Regexp(t, `(?m)^acme\s+.*\s+reject\s+off\s+30m0s\s+0$`, r.stdout)

	for _, bad := range [][]string{{"acme"}, {"acme", "--review", "maybe"}, {"acme", "--review", ""}, {"acme", "--review-timeout", "0s"},
		{"acme", "--duplicate-window-days", "-1"}, {"--review", "hold"}} {
		require.Equal(t, 2, runEnv(t, env, append([]string{"clients", "set"}, bad...)...).code, bad)
	}
	require.Equal(t, 1, runEnv(t, env, "clients", "set", "nobody", "--review", "hold").code)
	require.Equal(t, 1, runEnv(t, env, "clients", "show", "nobody").code)
}
