package intakectl_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

const priceHeader = "article,currency,unit_price,price_basis,unit,valid_from,valid_to,tolerance_pct\n"

// intakectl pricelist imports a buyer's list (replacing it), lists and
// exports it; a file with problems imports nothing and names each problem
// by line and column.
func TestPriceListCommands(t *testing.T) {
	t.Parallel()
	_, env, file := acmeDB(t)

	good := file("good.csv", priceHeader+"S-100,EUR,1.50,,C62,,,2\nS-200,EUR,25.00,100,,2026-01-01,2026-12-31,\n")
	r := runEnv(t, env, "pricelist", "import", "--client", "acme", "--buyer", "ACME", good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "imported 2 entries as the price list of acme for buyer ACME (replacing the list it had)\n", r.stdout)

	r = runEnv(t, env, "pricelist", "export", "--client", "acme", "--buyer", "ACME")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, priceHeader+"S-100,EUR,1.50,1,C62,,,2\nS-200,EUR,25.00,100,,2026-01-01,2026-12-31,0\n", r.stdout)

	r = runEnv(t, env, "pricelist", "list", "--client", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^ACME\s+2\s+\S+\s+intakectl\s+[0-9a-f]{64}$`, r.stdout)

	for _, c := range []struct{ name, body, want string }{
		{"header.csv", "article;currency;unit_price\nS-1;EUR;1\n",
			"  line 1: the header must be exactly " + priceHeader[:len(priceHeader)-1] + ", not article;currency;unit_price\n"},
		{"decimal.csv", priceHeader + "S-100,EUR,1.50,,,,,\nS-200,EUR,\"0,30\",,,,,\n",
			"  line 3, column unit_price: \"0,30\" is not a decimal number: write the decimal point as a dot (0.30)\n"},
		{"date.csv", priceHeader + "S-100,EUR,1.50,,,01.02.2026,,\n",
			"  line 2, column valid_from: \"01.02.2026\" is not a date: write YYYY-MM-DD, or leave it empty for no limit\n"},
	} {
		p := file(c.name, c.body)
		r = runEnv(t, env, "pricelist", "import", "--client", "acme", "--buyer", "ACME", p)
		require.Equal(t, 1, r.code, c.name)
		require.Equal(t, "intakectl: "+p+": invalid price list (nothing imported):\n"+c.want, r.stderr, c.name)
	}
	r = runEnv(t, env, "pricelist", "export", "--client", "acme", "--buyer", "ACME")
	require.Contains(t, r.stdout, "S-200,EUR,25.00,100", "the list before the invalid imports")

	require.Equal(t, 1, runEnv(t, env, "pricelist", "export", "--client", "acme").code, "no list for every buyer")
	require.Equal(t, 0, runEnv(t, env, "pricelist", "delete", "--client", "acme", "--buyer", "ACME").code)
	r = runEnv(t, env, "pricelist", "export", "--client", "acme", "--buyer", "ACME")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "client acme has no price list for buyer ACME")
	require.Equal(t, 2, runEnv(t, env, "pricelist", "import", good).code, "--client is required")
}

// intakectl clients set --flags sets what flagged orders get; show prints
// it (deliver by default).
func TestClientsSetFlags(t *testing.T) {
	t.Parallel()
	url, pool := schemaPool(t)
	env := map[string]string{"INTAKE_DATABASE_URL": url}
	require.Equal(t, 0, runEnv(t, env, "clients", "add", "--id", "acme", "--webhook-url", "https://erp.example/hook").code)
	r := runEnv(t, env, "clients", "show", "acme")
	require.Regexp(t, `(?m)^flags:\s+deliver$`, r.stdout)
	r = runEnv(t, env, "clients", "set", "acme", "--flags", "review")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^flags:\s+review$`, r.stdout)
	require.Equal(t, 2, runEnv(t, env, "clients", "set", "acme", "--flags", "hold").code)

	p, err := store.New(pool).FlagPolicy(t.Context(), "acme")
	require.NoError(t, err)
	require.Equal(t, document.FlagsReview, p)
}
