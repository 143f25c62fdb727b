package catalogue_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

// named is a minimal valid template whose docintake.name is name, quoted so
// that any characters survive YAML.
func named(name string) string {
	return fmt.Sprintf("issuer: X\nkeywords: [X]\nfields:\n  order_id:\n    parser: regex\n    regex: 'PO (\\d+)'\ndocintake:\n  name: %q\n", name)
}

// A template name is 1 to 100 ASCII letters, digits, '-', '_' or '.',
// starting with a letter or digit, whether it comes from docintake.name or
// from the file name.
func TestTemplateNameValidated(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"contoso-po", "A.b_c-1", "7", strings.Repeat("a", 100)} {
		_, err := pushFrom(t, named(ok))
		require.NoError(t, err, ok)
		require.NoError(t, catalogue.CheckTemplateName(ok), ok)
	}
	for _, bad := range []string{strings.Repeat("a", 101), strings.Repeat("a", 3000), "po\u202Eevil", "po\u2067x",
		"po name", "ä-po", ".hidden", "..", "-flag", "a/b", "po\tx"} {
		_, err := pushFrom(t, named(bad))
		require.ErrorIs(t, err, catalogue.ErrInvalidName, "%q", bad)
		require.ErrorContains(t, err, "docintake.name")
		require.ErrorIs(t, catalogue.CheckTemplateName(bad), catalogue.ErrInvalidName, "%q", bad)
	}
	require.ErrorIs(t, catalogue.CheckTemplateName(""), catalogue.ErrInvalidName)

	// Without docintake.name the file name is the name.
	f := filepath.Join(t.TempDir(), "my po.yml")
	require.NoError(t, os.WriteFile(f, []byte(strings.Replace(named("x"), "docintake:\n  name: \"x\"\n", "", 1)), 0o600))
	_, err := catalogue.ReadTemplateFile(f)
	require.ErrorIs(t, err, catalogue.ErrInvalidName)
}

// The templates directory leaves a file with an invalid name out (reported
// in skipped) and stores the others.
func TestSyncTemplatesDirRefusesInvalidNames(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	dir := t.TempDir()
	for file, content := range map[string]string{
		"good.yml":  named("good"),
		"bidi.yml":  named("po\u202Eevil"),
		"long.yml":  named(strings.Repeat("x", 3000)),
		"a b c.yml": strings.Replace(named("x"), "docintake:\n  name: \"x\"\n", "", 1),
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(content), 0o600))
	}
	changed, skipped, err := catalogue.SyncDir(t.Context(), st, dir)
	require.NoError(t, err)
	require.Equal(t, []string{"good v1"}, changed)
	require.Len(t, skipped, 3)
	for _, e := range skipped {
		require.ErrorIs(t, e, catalogue.ErrInvalidName)
	}
	list, err := st.ListTemplates(t.Context(), store.TemplatesFilter{All: true})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "good", list[0].Name)
}
