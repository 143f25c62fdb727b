package catalogue_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/store/storetest"
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
		require.Same(t, catalogue.GenericVersion, v)
	}

	dir := t.TempDir()
	named := filepath.Join(dir, "mine.yml")
	require.NoError(t, os.WriteFile(named, []byte(tpl("generic", "ACME")), 0o600))
	byFile := filepath.Join(t.TempDir(), "generic.yml")
	require.NoError(t, os.WriteFile(byFile, []byte(strings.Replace(tpl("x", "ACME"), "docintake:\n  name: x\n", "", 1)), 0o600))
	for _, f := range []string{named, byFile} {
		_, err := catalogue.ReadTemplateFile(f)
		require.True(t, errors.Is(err, catalogue.ErrReservedName), "%s: %v", f, err)
		require.Contains(t, err.Error(), f)
		require.Contains(t, err.Error(), "docintake.name")
	}
	_, skipped, err := catalogue.SyncDir(t.Context(), storetest.Store(t), dir)
	require.NoError(t, err)
	require.Len(t, skipped, 1)
	require.True(t, errors.Is(skipped[0], catalogue.ErrReservedName), "%v", skipped[0])
}
