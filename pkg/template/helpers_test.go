package template_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/docintake/docintake/pkg/template"
)

// regexp2 keeps a clock goroutine for match timeouts while matches with a
// timeout are recent; it ends by itself.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// parseTemplate parses an inline YAML template and requires it to have no
// problems.
func parseTemplate(t *testing.T, yml string) *template.Template {
	t.Helper()
	tpl, err := template.Parse("inline.yml", []byte(yml))
	require.NoError(t, err)
	require.Empty(t, tpl.Problems)
	return tpl
}
