package opentranstest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
)

func TestErrors(t *testing.T) {
	t.Parallel()
	valid, err := os.ReadFile(filepath.Join(opentranstest.SharedDir(t), "opentrans", "examples", "minimal_order.xml"))
	require.NoError(t, err)
	require.Empty(t, opentranstest.Errors(t, valid))
	opentranstest.Validate(t, valid)

	errs := opentranstest.Errors(t, []byte(`<ORDER xmlns="http://www.opentrans.org/XMLSchema/2.1" version="2.1" type="standard"/>`))
	require.Len(t, errs, 1)
	require.Contains(t, errs[0], "Missing child element(s)")

	errs = opentranstest.Errors(t, []byte(`<ORDER>`))
	require.NotEmpty(t, errs, "not well-formed")
}
