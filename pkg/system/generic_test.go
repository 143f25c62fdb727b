package system_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/pkg/template"
	"github.com/stretchr/testify/require"
)

// The built-in template generic is served to every client without a stored
// version, and no template may take its name: not from a templates
// directory, not by a push, whether docintake.name or the file name says
// it.
func TestGenericBuiltIn(t *testing.T) {
	t.Parallel()
	require.Equal(t, generic.Name, template.FallbackGeneric, "docintake.fallback names the reader by its template name")
	_, tm := setupCatalogue(t)
	for _, client := range []string{"acme", "globex"} {
		require.NoError(t, resolves(tm, client, "generic", "", "generic")())
		v, ok := tm.Current(client, "generic")
		require.True(t, ok)
		require.True(t, v.Builtin())
		require.Same(t, system.GenericVersion, v)
	}

	dir := t.TempDir()
	named := filepath.Join(dir, "mine.yml")
	require.NoError(t, os.WriteFile(named, []byte(tpl("generic", "ACME")), 0o600))
	byFile := filepath.Join(t.TempDir(), "generic.yml")
	require.NoError(t, os.WriteFile(byFile, []byte(strings.Replace(tpl("x", "ACME"), "docintake:\n  name: x\n", "", 1)), 0o600))
	for _, f := range []string{named, byFile} {
		_, err := system.ReadTemplateFile(f)
		require.True(t, errors.Is(err, system.ErrReservedName), "%s: %v", f, err)
		require.Contains(t, err.Error(), f)
		require.Contains(t, err.Error(), "docintake.name")
	}
	_, skipped, err := system.SyncTemplatesDir(t.Context(), storetest.Store(t), dir)
	require.NoError(t, err)
	require.Len(t, skipped, 1)
	require.True(t, errors.Is(skipped[0], system.ErrReservedName), "%v", skipped[0])
}

// The clients file takes unknown_party: reject (the default) or generic,
// and names the entry of any other value.
func TestClientsFileUnknownParty(t *testing.T) {
	t.Parallel()
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "clients.yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	specs, err := system.LoadClientsFile(write("clients:\n  - id: a\n  - id: b\n    unknown_party: generic\n  - id: c\n    unknown_party: reject\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"", "generic", "reject"}, []string{specs[0].UnknownParty, specs[1].UnknownParty, specs[2].UnknownParty})
	st := storetest.Store(t)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	for id, want := range map[string]document.UnknownParty{"a": document.UnknownPartyReject, "b": document.UnknownPartyGeneric,
		"c": document.UnknownPartyReject} {
		c, err := st.Client(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, want, c.UnknownParty, id)
	}

	_, err = system.LoadClientsFile(write("clients:\n  - id: a\n    unknown_party: maybe\n"))
	require.ErrorContains(t, err, "clients[0] (a)")
	require.ErrorContains(t, err, `unknown_party must be reject or generic, not "maybe"`)
}
