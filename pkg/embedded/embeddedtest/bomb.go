package embeddedtest

import (
	"bytes"
	"compress/zlib"
	"fmt"
)

// FlateBombPDF returns a one-page PDF whose only attachment, bomb.xml, is a
// FlateDecode stream that inflates to n bytes (an XML start followed by
// spaces) from about n/1000 bytes in the file: the attachment form of
// corpus/malformed/bad_flate_bomb.pdf.
func FlateBombPDF(n int) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	head := []byte(`<?xml version="1.0"?><rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100"><!--`)
	_, _ = zw.Write(head)
	pad := bytes.Repeat([]byte{' '}, 1<<16)
	for left := n - len(head); left > 0; left -= len(pad) {
		_, _ = zw.Write(pad[:min(left, len(pad))])
	}
	_ = zw.Close()

	var b bytes.Buffer
	var offsets []int
	obj := func(body string, stream []byte) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\n", len(offsets), body)
		if stream != nil {
			b.WriteString("stream\n")
			b.Write(stream)
			b.WriteString("\nendstream\n")
		}
		b.WriteString("endobj\n")
	}
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	content := []byte("BT /F1 12 Tf 72 720 Td (Order with a bomb attached) Tj ET")
	obj("<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(bomb.xml) 5 0 R] >> >> >>", nil)
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>", nil)
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 7 0 R >> >> >>", nil)
	obj(fmt.Sprintf("<< /Length %d >>", len(content)), content)
	obj("<< /Type /Filespec /F (bomb.xml) /UF (bomb.xml) /EF << /F 6 0 R /UF 6 0 R >> >>", nil)
	obj(fmt.Sprintf("<< /Type /EmbeddedFile /Subtype /text#2Fxml /Filter /FlateDecode /Length %d >>", z.Len()), z.Bytes())
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", nil)
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}
