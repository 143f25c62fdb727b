package intakectl_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// intakectl units manages a client's unit table: a file imports completely
// or not at all, codes are normalised to the BMEcat 2005 list, --replace
// makes the file the whole table.
func TestUnitsCommand(t *testing.T) {
	t.Parallel()
	st, env, write := acmeDB(t)
	table := func() [][4]string {
		rows, err := st.Units(t.Context(), "acme", nil, true)
		require.NoError(t, err)
		out := make([][4]string, len(rows))
		for i, r := range rows {
			out[i] = [4]string{r.Unit, r.Article, r.Code, r.Factor}
		}
		return out
	}

	good := write("units.csv", "unit,article,code,factor\nCS,,PCE,12\n\"Karton\", 4711 ,C62,24\nBund,,BE,\n\n")
	r := runEnv(t, env, "units", "import", "--client", "acme", good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "imported 3 unit(s) for acme")
	want := [][4]string{{"Bund", "", "BE", "1"}, {"CS", "", "C62", "12"}, {"Karton", "4711", "C62", "24"}}
	require.Equal(t, want, table(), "PCE is written C62; an empty factor is 1")

	r = runEnv(t, env, "units", "list", "--client", "acme")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^Karton\s+4711\s+C62\s+24\s`, r.stdout)
	require.Regexp(t, `(?m)^CS\s+\(every\)\s+C62\s+12\s`, r.stdout)
	r = runEnv(t, env, "units", "list", "--client", "acme", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &listed))
	require.Len(t, listed, 3)
	require.Equal(t, map[string]any{"unit": "CS", "article": "", "code": "C62", "factor": "12"},
		map[string]any{"unit": listed[1]["unit"], "article": listed[1]["article"], "code": listed[1]["code"], "factor": listed[1]["factor"]})

	for name, body := range map[string]string{
		"no-header.csv":   "CS,,C62,12\n",
		"no-code.csv":     "unit,factor\nCS,12\n",
		"bad-code.csv":    "unit,code\nCS,piece of 12\n",
		"zero.csv":        "unit,code,factor\nCS,C62,0\n",
		"comma.csv":       "unit,code,factor\nCS,C62,\"1,5\"\n",
		"dup.csv":         "unit,code\nStk.,C62\nSTK,C62\n",
		"columns.csv":     "unit,code\nCS,C62,12\n",
		"empty-unit.csv":  "unit,code\n,C62\n",
		"header-only.csv": "unit,code\n",
	} {
		r = runEnv(t, env, "units", "import", "--client", "acme", "--replace", write(name, body))
		require.Equal(t, 1, r.code, name)
		require.Contains(t, r.stderr, name+":", "the error names the file (and line): %s", name)
	}
	require.Equal(t, want, table(), "a bad file imports nothing")
	require.Equal(t, 1, runEnv(t, env, "units", "import", "--client", "nobody", good).code)
	require.Equal(t, 2, runEnv(t, env, "units", "import", good).code, "--client is required")

	// Delete the article's row; the row for every article stays apart.
	r = runEnv(t, env, "units", "delete", "--client", "acme", "--article", "4711", "karton")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, want[:2], table())
	require.Equal(t, 1, runEnv(t, env, "units", "delete", "--client", "acme", "Karton").code, "no row for every article")

	// --replace: the file is the whole table (columns in any order).
	r = runEnv(t, env, "units", "import", "--client", "acme", "--replace", write("new.csv", "code,unit,factor\nKGM,g,0.001\n"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, [][4]string{{"g", "", "KGM", "0.001"}}, table())
}
