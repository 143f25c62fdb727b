package intakectl_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// `intakectl --help` lists the integrator commands.
func TestHelpListsListenAndUpload(t *testing.T) {
	t.Parallel()
	r := run(t, "--help")
	require.Equal(t, 0, r.code)
	require.Regexp(t, `(?m)^  listen +receive webhooks locally`, r.stderr)
	require.Regexp(t, `(?m)^  upload +upload PDFs`, r.stderr)
	r = run(t, "listen", "--help")
	require.Contains(t, r.stderr, "usage: intakectl listen [--addr 127.0.0.1:9099]")
}
