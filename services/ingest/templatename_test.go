package ingest_test

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// PUT /templates/{name} refuses a name outside 1 to 100 ASCII letters,
// digits, '-', '_' or '.' (422 template_name_invalid, nothing stored),
// whether the URL or the template's docintake.name carries it: such names
// were shown raw in the ops console (3,000 characters, bidi overrides).
func TestTemplatesAPIRefusesInvalidNames(t *testing.T) {
	t.Parallel()
	b := setupTemplatesAPI(t)
	withName := func(name string) []byte {
		return []byte(strings.Replace(apiTemplate, "name: acme-po", `name: "`+name+`"`, 1))
	}
	for _, c := range []struct {
		label, url string
		content    []byte
		path       string
	}{
		{"101 characters", "/templates/" + strings.Repeat("a", 101), withName(strings.Repeat("a", 101)), "name"},
		{"3000 characters", "/templates/" + strings.Repeat("a", 3000), withName(strings.Repeat("a", 3000)), "name"},
		{"space in the URL", "/templates/acme%20po", withName("acme po"), "name"},
		{"leading dot", "/templates/.acme", withName(".acme"), "name"},
		{"bidi override in docintake.name", "/templates/acme-po", withName(`acme\u202Eop`), "docintake.name"},
		{"3000 characters in docintake.name", "/templates/acme-po", withName(strings.Repeat("a", 3000)), "docintake.name"},
	} {
		r := b.do(t, b.req(t, http.MethodPut, c.url, "tok-acme", "application/yaml", c.content))
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s: %s", c.label, r.raw)
		require.Equal(t, "template_name_invalid", r.body["code"], c.label)
		require.Equal(t, map[string]any{"path": c.path}, r.body["details"], c.label)
	}
	list, err := b.st.ListTemplates(t.Context(), store.TemplatesFilter{All: true})
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")

	// 100 characters is fine.
	long := strings.Repeat("a", 100)
	r := b.do(t, b.req(t, http.MethodPut, "/templates/"+long, "tok-acme", "application/yaml", withName(long)))
	require.Equal(t, http.StatusCreated, r.status, string(r.raw))
}

// A name stored before names were validated is shown in the ops console
// with its bidi controls as visible escapes, like client text.
func TestOpsShowsStoredTemplateNameEscaped(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	_, err := b.st.PushTemplate(t.Context(), store.TemplatePush{Name: "po\u202Efdp.exe", Filename: "old.yml", Content: []byte("v1"), PushedBy: "ops"})
	require.NoError(t, err)
	page := html.UnescapeString(readBody(t, opsRequest(t, "GET", b.url+"/ops/templates", opsToken, nil)))
	require.NotContains(t, page, "\u202E")
	require.Contains(t, page, "<td>po<U+202E>fdp.exe</td>")
}
