package intakectl_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/intakectl"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

func runEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := intakectl.Main(context.Background(), args, intakectl.Env{Getenv: func(k string) string { return env[k] },
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb})
	return result{code, out.String(), errb.String()}
}

func TestClientsAddTokenRotateRevoke(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	env := map[string]string{"INTAKE_DATABASE_URL": url}
	r := runEnv(t, env, "clients", "add", "--id", "acme", "--name", "ACME", "--webhook-url", "https://erp.example/hook", "--webhook-token", "wt")
	require.Equal(t, 0, r.code, r.stderr)
	tok := strings.TrimSpace(r.stdout)
	require.True(t, strings.HasPrefix(tok, "dit_"), tok)
	require.Greater(t, len(tok), 40)

	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	c, err := st.ClientByToken(t.Context(), tok)
	require.NoError(t, err)
	require.Equal(t, document.Client{ID: "acme", Name: "ACME", WebhookURL: "https://erp.example/hook", WebhookToken: "wt", WebhookEnabled: true,
		UnknownParty: document.UnknownPartyReject}, c)
	// Only the hash is stored.
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM client_tokens WHERE token_sha256 = $1`, []byte(tok)).Scan(&n))
	require.Zero(t, n)

	require.Equal(t, 1, runEnv(t, env, "clients", "add", "--id", "acme", "--webhook-url", "https://x").code, "no silent overwrite")
	require.Equal(t, 2, runEnv(t, env, "clients", "add", "--id", "Bad Id", "--webhook-url", "https://x").code)

	r = runEnv(t, env, "clients", "token", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	tok2 := strings.TrimSpace(r.stdout)
	require.NotEqual(t, tok, tok2)
	_, err = st.ClientByToken(t.Context(), tok2)
	require.NoError(t, err)
	require.Equal(t, 0, runEnv(t, env, "clients", "revoke-token", "acme", tok).code)
	_, err = st.ClientByToken(t.Context(), tok)
	require.Equal(t, document.EUNAUTHENTICATED, document.ErrorKind(err))

	require.Equal(t, 0, runEnv(t, env, "clients", "disable", "acme").code)
	r = runEnv(t, env, "clients", "list")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "acme")
	require.Contains(t, r.stdout, "false")
	require.NotContains(t, r.stdout, "wt", "webhook tokens are not listed")

	r = runEnv(t, map[string]string{}, "clients", "list")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "INTAKE_DATABASE_URL")
}
