package template_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/template"
	"github.com/stretchr/testify/require"
)

// Half of the currency's minor unit unless the template sets a tolerance.
func TestToleranceFor(t *testing.T) {
	t.Parallel()
	require.Equal(t, "0.005", template.Checks{}.ToleranceFor("EUR"))
	require.Equal(t, "0.5", template.Checks{}.ToleranceFor("JPY"))
	require.Equal(t, "0.0005", template.Checks{}.ToleranceFor("kwd"))
	require.Equal(t, "0.005", template.Checks{}.ToleranceFor(""))
	require.Equal(t, "0.02", template.Checks{Tolerance: "0.02"}.ToleranceFor("EUR"))
}
