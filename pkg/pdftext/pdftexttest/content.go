package pdftexttest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// ContentPDF is a one-page PDF whose page runs the given zlib-compressed
// content streams one after the other (see Deflated): the shape of
// decompression bombs and of documents that are cheap to send and
// expensive to read.
func ContentPDF(streams ...[]byte) []byte {
	w := &writer{}
	w.buf.WriteString("%PDF-1.4\n")
	const catalog, tree, page, font = 1, 2, 3, 4
	var refs []string
	for i := range streams {
		refs = append(refs, fmt.Sprintf("%d 0 R", font+1+i))
	}
	w.obj(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	w.obj(tree, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	w.obj(page, fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents [%s] >>",
		tree, font, strings.Join(refs, " ")))
	w.obj(font, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, s := range streams {
		w.stream(font+1+i, "/Filter /FlateDecode", s)
	}
	return w.finish(font+1+len(streams), catalog)
}

// Deflated is unit repeated until it fills n bytes, zlib-compressed.
func Deflated(unit string, n int) []byte {
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestCompression) // a valid level: no error
	chunk := []byte(strings.Repeat(unit, max(1, (1<<20)/len(unit))))
	for left := n; left > 0; left -= len(chunk) {
		_, _ = zw.Write(chunk[:min(left, len(chunk))]) // a bytes.Buffer does not fail
	}
	_ = zw.Close()
	return b.Bytes()
}
