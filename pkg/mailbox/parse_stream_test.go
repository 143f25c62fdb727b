package mailbox_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/stretchr/testify/require"
)

// lineWriter breaks base64 into lines of 76 as mail clients do.
type lineWriter struct {
	w   io.Writer
	col int
}

func (l *lineWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(76-l.col, len(p))
		if _, err := l.w.Write(p[:k]); err != nil {
			return n, err
		}
		n, p, l.col = n+k, p[k:], l.col+k
		if l.col == 76 {
			if _, err := l.w.Write(crlf); err != nil {
				return n, err
			}
			l.col = 0
		}
	}
	return n, nil
}

var crlf = []byte("\r\n")

// streamedMail is a mail with a PDF of size bytes and then a small PDF,
// written as it is read: the test never holds it either.
func streamedMail(size int64) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		bw := &bufWriter{w: pw}
		fmt.Fprint(bw, "From: jane@buyer.example\r\nMessage-ID: <big@buyer.example>\r\nSubject: Big\r\n"+
			"Content-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: application/pdf\r\n"+
			"Content-Disposition: attachment; filename=huge.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n")
		enc := base64.NewEncoder(base64.StdEncoding, &lineWriter{w: bw})
		head := []byte("%PDF-1.4\n")
		_, _ = enc.Write(head)
		_, _ = io.CopyN(enc, zeros{}, size-int64(len(head)))
		_ = enc.Close()
		fmt.Fprintf(bw, "\r\n--B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=small.pdf\r\n\r\n%%PDF-1.4 small\r\n--B--\r\n")
		pw.CloseWithError(bw.flush())
	}()
	return pr
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// bufWriter batches the line writer's bytes for the pipe.
type bufWriter struct {
	w   io.Writer
	buf bytes.Buffer
}

func (b *bufWriter) Write(p []byte) (int, error) {
	b.buf.Write(p)
	if b.buf.Len() >= 32<<10 {
		return len(p), b.flush()
	}
	return len(p), nil
}

func (b *bufWriter) flush() error {
	_, err := b.w.Write(b.buf.Bytes())
	b.buf.Reset()
	return err
}

// A 40 MB mail is parsed as it streams: its 30 MiB PDF, over the limit,
// keeps its place with its size and no bytes; the PDF after it is read;
// and the parse allocates a few times the limit, not the mail.
func TestParseReaderStreamsLargeMail(t *testing.T) {
	// Not parallel: TotalAlloc counts the whole process, and parallel tests
	// start only after every sequential one has finished.
	const size = 30 << 20
	lim := mailbox.DefaultLimits
	lim.MaxPDFBytes = 1 << 20
	r := streamedMail(size)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, err := mailbox.ParseReader(r, lim)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Equal(t, "big@buyer.example", m.MessageID)
	require.Len(t, m.PDFs, 2)
	require.Equal(t, mailbox.Attachment{Filename: "huge.pdf", Size: size, TooLarge: true}, m.PDFs[0])
	require.Equal(t, "small.pdf", m.PDFs[1].Filename)
	require.Equal(t, []byte("%PDF-1.4 small"), m.PDFs[1].Data)
	alloc := after.TotalAlloc - before.TotalAlloc
	require.Less(t, alloc, uint64(8<<20), "parsing a 40 MB mail allocated %d bytes", alloc)
}

// Parse and ParseReader name a mail without a Message-ID alike: by the
// SHA-256 of all its bytes.
func TestParseReaderNamesByAllBytes(t *testing.T) {
	raw := []byte("Subject: no id\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4 x\r\n")
	m, err := mailbox.ParseReader(bytes.NewReader(raw), mailbox.DefaultLimits)
	require.NoError(t, err)
	sum := sha256.Sum256(raw)
	require.Equal(t, fmt.Sprintf("sha256-%x@mailintake.invalid", sum[:16]), m.MessageID)
}
