package intakectl_test

import (
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// templates push refuses a template whose name is not 1 to 100 ASCII
// letters, digits, '-', '_' or '.' (here a bidi override and 3,000
// characters), and with it the whole push: nothing is stored.
func TestTemplatesPushRefusesInvalidNames(t *testing.T) {
	t.Parallel()
	url := storetest.SchemaURL(t)
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	env := map[string]string{"INTAKE_DATABASE_URL": url, "USER": "alice"}
	dir := fixture(t, map[string][]byte{
		"acme.yml": []byte(acmeV1),
		"bidi.yml": []byte(strings.Replace(acmeV1, "name: acme", `name: "acme\u202Eevil"`, 1)),
		"long.yml": []byte(strings.Replace(acmeV1, "name: acme", "name: "+strings.Repeat("x", 3000), 1)),
	})
	r := runEnv(t, env, "templates", "push", dir)
	require.Equal(t, 1, r.code, r.stdout)
	require.Equal(t, 2, strings.Count(r.stdout, "docintake.name: a template name is 1 to 100 ASCII letters"), r.stdout)
	require.Contains(t, r.stderr, "refused, nothing stored")
	list, err := store.New(pool).ListTemplates(t.Context(), store.TemplatesFilter{All: true})
	require.NoError(t, err)
	require.Empty(t, list)
}
