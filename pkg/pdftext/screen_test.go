package pdftext

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// contentPDF is a one-page PDF whose page draws the given zlib content
// streams one after the other.
func contentPDF(streams ...[]byte) []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(body string, stream []byte) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s", len(offs), body)
		if stream != nil {
			fmt.Fprintf(&b, "\nstream\n%s\nendstream", stream)
		}
		b.WriteString("\nendobj\n")
	}
	b.WriteString("%PDF-1.4\n")
	refs := ""
	for i := range streams {
		refs += fmt.Sprintf("%d 0 R ", 4+i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>", nil)
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ["+refs+"] >>", nil)
	for _, s := range streams {
		obj(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>", len(s)), s)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

// deflated is n spaces, zlib-compressed.
func deflated(t testing.TB, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := zlib.NewWriterLevel(&b, zlib.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(bytes.Repeat([]byte(" "), n))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// A bomb split into streams that each stay under the limit is refused as
// one that is not: the limit holds for the document's streams together.
// One such stream alone is read.
func TestScreenAddsUpStreams(t *testing.T) {
	t.Parallel()
	part := deflated(t, 60<<20)
	require.ErrorIs(t, screen(contentPDF(part, part, part)), errBomb, "three streams of 60 MiB")
	require.NoError(t, screen(contentPDF(part)), "one stream of 60 MiB")
}
