package template_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/templatetest"
)

// SkipBroken loads invoice2data's built-in folder as invoice2data does: of
// the 13 templates with mistakes (docs/templates.md, "Compatibility"), the
// two invoice2data cannot run either (nl.blokker: lines is a list; nl.gulf:
// an unbalanced regex) are skipped with a warning naming the file; the 11
// whose mistakes invoice2data runs past load with a warning per problem.
func TestBuiltinTemplatesSkipBroken(t *testing.T) {
	t.Parallel()
	root := filepath.Join(templatetest.SharedDir(t), "corpus", "invoice2data", "templates")
	set, err := template.LoadWith(template.LoadOptions{SkipBroken: true}, root)
	require.NoError(t, err)
	require.Len(t, set.Templates(), 213)
	var skipped, passed []string
	for _, w := range set.Warnings() {
		switch {
		case strings.Contains(w, ": skipped, it does not load: "):
			skipped = append(skipped, w[:strings.Index(w, ": skipped")])
		case strings.HasSuffix(w, "(loaded anyway, as invoice2data does)"):
			rel, _ := filepath.Rel(root, w[:strings.Index(w, ":")])
			passed = append(passed, filepath.Base(rel))
		}
	}
	require.Equal(t, []string{filepath.Join(root, "nl", "nl.blokker.yml"), filepath.Join(root, "nl", "nl.gulf.yml")}, skipped)
	require.ElementsMatch(t, []string{"com.AzureInterior.yml", "com.namecheap.yml", "com.namecheap.yml", "com.twitter.de.yml",
		"nl.accor.rhine.opco hotels.json", "nl.valk.exclusief.hotel.json", "nl.valk.exclusief.restaurant.json",
		"nl.megekko.json", "fr.edf.pme.yml", "nl.anwb.yml", "nl.goos.yml", "nl.ok.yml"}, passed)
	_, ok := set.ByName("nl.gulf")
	require.False(t, ok)
	_, ok = set.ByName("com.AzureInterior")
	require.True(t, ok)
}
