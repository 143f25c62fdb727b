package pdftext

import (
	"testing"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// A bomb split into streams that each stay under the limit is refused as
// one that is not: the limit holds for the document's streams together.
// One such stream alone is read.
func TestScreenAddsUpStreams(t *testing.T) {
	t.Parallel()
	part := pdftexttest.Deflated(" ", 60<<20)
	require.ErrorIs(t, screen(pdftexttest.ContentPDF(part, part, part)), errBomb, "three streams of 60 MiB")
	require.NoError(t, screen(pdftexttest.ContentPDF(part)), "one stream of 60 MiB")
}
