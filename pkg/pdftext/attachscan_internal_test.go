package pdftext

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// objStmPDF is a minimal PDF body whose only object stream holds objects
// and whose dictionary names filter.
func objStmPDF(t *testing.T, objects, filter string, corrupt bool) []byte {
	t.Helper()
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, err := w.Write([]byte(objects))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	data := z.Bytes()
	if corrupt {
		data = data[:len(data)/2]
	}
	return fmt.Appendf(nil, "%%PDF-1.5\n5 0 obj\n<< /Type /ObjStm /N 1 /First 6 /Filter %s /Length %d >>\nstream\n%s\nendstream\nendobj\n%%%%EOF\n",
		filter, len(data), data)
}

// Attachments inside object streams are found without pdfdetach's process;
// a PDF whose object streams do not mention one is ruled out; a stream the
// scan cannot read leaves the decision to pdfdetach.
func TestMayHaveAttachmentsInObjectStreams(t *testing.T) {
	t.Parallel()
	spec := "12 0 << /Type /Filespec /F (order-x.xml) /EF << /F 13 0 R >> /AFRelationship /Data >>"
	plain := "12 0 << /Type /Page /Contents 14 0 R >>"
	cases := []struct {
		name string
		pdf  []byte
		want bool
	}{
		{"file specification in an object stream", objStmPDF(t, spec, "/FlateDecode", false), true},
		{"object stream without attachment names", objStmPDF(t, plain, "/FlateDecode", false), false},
		{"filter the scan does not read", objStmPDF(t, plain, "/ASCIIHexDecode", false), true},
		{"corrupt stream", objStmPDF(t, plain, "/FlateDecode", true), true},
		{"no object streams, no names", []byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n"), false},
		{"embedded file stream in plain bytes", []byte("%PDF-1.4\n1 0 obj\n<< /Type /EmbeddedFile /Length 0 >>\nstream\n\nendstream\nendobj\n"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, mayHaveAttachments(c.pdf))
		})
	}
	// The inflate bound: a stream over it is not read (pdfdetach decides).
	found, ok := objectStreamsMention(objStmPDF(t, plain+string(make([]byte, 4096)), "/FlateDecode", false), 1024)
	require.False(t, found)
	require.False(t, ok)
}
