package pdftext

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/repotest"
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
	// A name cut by a read boundary of the scan (reads of up to 32 KiB)
	// is still found, wherever the cut falls.
	for cut := 1; cut < len("EmbeddedFile"); cut++ {
		pad := strings.Repeat(" ", 32<<10-cut)
		require.True(t, mayHaveAttachments(objStmPDF(t, pad+"EmbeddedFile", "/FlateDecode", false)), "cut %d", cut)
	}
	// The inflate bound: a stream over it is not read (pdfdetach decides).
	found, ok := objectStreamsMention(objStmPDF(t, plain+string(make([]byte, 4096)), "/FlateDecode", false), 1024)
	require.False(t, found)
	require.False(t, ok)
}

// compressedNamesPDF is a PDF 1.5 whose catalog, EmbeddedFiles name tree
// and file specification live in a compressed object stream (found through
// an xref stream) and whose embedded file stream has no /Type: no
// attachment name is in its raw bytes.
func compressedNamesPDF(t *testing.T, name, data string) []byte {
	t.Helper()
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(" + name + ") 4 0 R] >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
		"<< /Type /Filespec /F (" + name + ") /UF (" + name + ") /EF << /F 5 0 R >> >>",
	}
	var head, body bytes.Buffer
	for i, o := range objs {
		fmt.Fprintf(&head, "%d %d ", i+1, body.Len())
		body.WriteString(o + "\n")
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	_, err := w.Write(append(head.Bytes(), body.Bytes()...))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	var pdf bytes.Buffer
	pdf.WriteString("%PDF-1.5\n")
	off5 := pdf.Len()
	fmt.Fprintf(&pdf, "5 0 obj\n<< /Length %d >>\nstream\n%s\nendstream\nendobj\n", len(data), data)
	off6 := pdf.Len()
	fmt.Fprintf(&pdf, "6 0 obj\n<< /Type /ObjStm /N %d /First %d /Filter /FlateDecode /Length %d >>\nstream\n", len(objs), head.Len(), z.Len())
	pdf.Write(z.Bytes())
	pdf.WriteString("\nendstream\nendobj\n")
	off7 := pdf.Len()
	// Entries of 1, 4 and 2 bytes: type, offset or object stream, index.
	var xref bytes.Buffer
	entry := func(typ byte, f2 uint32, f3 uint16) {
		xref.Write([]byte{typ, byte(f2 >> 24), byte(f2 >> 16), byte(f2 >> 8), byte(f2), byte(f3 >> 8), byte(f3)})
	}
	entry(0, 0, 0xffff)
	for i := range objs {
		entry(2, 6, uint16(i))
	}
	entry(1, uint32(off5), 0)
	entry(1, uint32(off6), 0)
	entry(1, uint32(off7), 0)
	fmt.Fprintf(&pdf, "7 0 obj\n<< /Type /XRef /Size 8 /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", xref.Len())
	pdf.Write(xref.Bytes())
	fmt.Fprintf(&pdf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", off7)
	return pdf.Bytes()
}

// An attachment whose file specification and name tree are only inside a
// compressed object stream is read: the scan inflates the object stream
// before it rules attachments out.
func TestAttachmentNamedOnlyInObjectStream(t *testing.T) {
	t.Parallel()
	requireTool(t, "pdfdetach")
	pdf := compressedNamesPDF(t, "order-x.xml", "<order/>")
	require.False(t, mentionsAttachment(pdf), "an attachment name in the raw bytes: the test would not need the object stream")
	got, err := Attachments(context.Background(), pdf, AttachmentLimits{})
	require.NoError(t, err)
	require.Equal(t, []Attachment{{Index: 1, Name: "order-x.xml", Data: []byte("<order/>")}}, got)
}

// mentionsAttachment answers as bytes.Contains does for each name: on
// random bytes drawn from the names' letters (so near misses and overlaps
// abound) and on every corpus PDF.
func TestMentionsAttachmentIsContains(t *testing.T) {
	t.Parallel()
	ref := func(b []byte) bool {
		return bytes.Contains(b, []byte("EmbeddedFile")) || bytes.Contains(b, []byte("/EF"))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const letters = "/EFmbedFilexF"
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		if rng.IntN(4) == 0 {
			name := []string{"EmbeddedFile", "/EF", "EmbeddedFil", "/E", "mbeddedFile"}[rng.IntN(5)]
			at := rng.IntN(len(b) + 1)
			b = append(b[:at:at], append([]byte(name), b[at:]...)...)
		}
		require.Equal(t, ref(b), mentionsAttachment(b), "%q", b)
	}
	pdfs, err := filepath.Glob(filepath.Join(repotest.Shared(t), "corpus", "*", "*.pdf"))
	require.NoError(t, err)
	for _, p := range pdfs {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, ref(b), mentionsAttachment(b), p)
	}
}
