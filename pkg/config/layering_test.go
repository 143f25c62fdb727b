package config_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/stretchr/testify/require"
)

// adapters are the packages at the edge: they own their defaults as
// constants and take values through their options, so the dependency runs
// from pkg/config (the application) to them, never back.
var adapters = []string{"queue", "objectstore", "webhook", "pdftext"}

// TestAdaptersDoNotImportConfig fails when an adapter package depends on
// pkg/config, directly or through another package (go list -deps of its
// non-test build).
func TestAdaptersDoNotImportConfig(t *testing.T) {
	t.Parallel()
	const cfg = "github.com/docintake/docintake/pkg/config"
	for _, a := range adapters {
		out, err := exec.Command("go", "list", "-deps", "github.com/docintake/docintake/pkg/"+a).CombinedOutput()
		require.NoError(t, err, "go list -deps %s: %s", a, out)
		for _, dep := range strings.Fields(string(out)) {
			require.NotEqual(t, cfg, dep, "pkg/%s depends on pkg/config: give the adapter its own Default* constant and have pkg/config hand the value down", a)
		}
	}
}

// pkg/config spells the PDF defaults instead of importing pkg/pdftext's
// constants: that import would link the PDF engines into every binary that
// reads its configuration, the dispatcher's too. This holds the two to the
// same values.
func TestPDFDefaultsArePdftexts(t *testing.T) {
	t.Parallel()
	d := config.Defaults()
	require.Equal(t, pdftext.DefaultTimeout, d.PDFTimeout)
	require.Equal(t, pdftext.DefaultOCRPageTimeout, d.OCRPageTimeout)
	require.Equal(t, pdftext.DefaultAttachmentCount, d.EmbeddedMaxCount)
	require.Equal(t, pdftext.DefaultAttachmentBytes, d.EmbeddedMaxBytes)
	require.Equal(t, pdftext.DefaultAttachmentTimeout, d.EmbeddedTimeout)
}
