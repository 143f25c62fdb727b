package intakectl_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// A client's unknown_party is reject unless set: at creation
// (--unknown-party) or later (clients unknown-party ID reject|generic), and
// clients list shows it.
func TestClientsUnknownParty(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	env := map[string]string{"INTAKE_DATABASE_URL": url}
	require.Equal(t, 0, runEnv(t, env, "clients", "add", "--id", "acme", "--webhook-url", "https://erp.example/hook").code)
	require.Equal(t, 0, runEnv(t, env, "clients", "add", "--id", "globex", "--webhook-url", "https://erp.example/hook",
		"--unknown-party", "generic").code)
	require.Equal(t, 2, runEnv(t, env, "clients", "add", "--id", "initech", "--webhook-url", "https://x", "--unknown-party", "maybe").code)

	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	want := func(id string, v document.UnknownParty) {
		t.Helper()
		c, err := st.Client(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, v, c.UnknownParty, id)
	}
	want("acme", document.UnknownPartyReject)
	want("globex", document.UnknownPartyGeneric)

	require.Equal(t, 0, runEnv(t, env, "clients", "unknown-party", "acme", "generic").code)
	want("acme", document.UnknownPartyGeneric)
	r := runEnv(t, env, "clients", "token", "acme") // a rotation keeps the setting
	require.Equal(t, 0, r.code, r.stderr)
	want("acme", document.UnknownPartyGeneric)
	require.Equal(t, 0, runEnv(t, env, "clients", "unknown-party", "globex", "reject").code)
	want("globex", document.UnknownPartyReject)

	require.Equal(t, 2, runEnv(t, env, "clients", "unknown-party", "acme", "maybe").code)
	require.Equal(t, 2, runEnv(t, env, "clients", "unknown-party", "acme").code)
	r = runEnv(t, env, "clients", "unknown-party", "nobody", "generic")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "nobody")

	r = runEnv(t, env, "clients", "list")
	require.Equal(t, 0, r.code)
	require.Regexp(t, `(?m)^ID\s+NAME\s+WEBHOOK\s+ENABLED\s+UNKNOWN_PARTY\s+REVIEW\s+REVIEW_TIMEOUT\s+DUPLICATE_WINDOW_DAYS$`, r.stdout)
	require.Regexp(t, `(?m)^acme\s+.*\s+generic\s+off\s+4h0m0s\s+90$`, r.stdout)
}
