package ingest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
)

// memLimit is how much of an upload is kept in memory before it spills to a
// temporary file: typical orders (50–500 KB) never touch the disk, a 25 MiB
// scan costs 1 MiB of heap per request instead of 25.
const memLimit = 1 << 20

// spool holds one uploaded file while the rest of the request is read and
// validated, hashing it on the way in.
type spool struct {
	buf  bytes.Buffer
	file *os.File
	size int64
	sum  hash.Hash
	head []byte // first bytes, for the %PDF- sniff
}

func newSpool() *spool { return &spool{sum: sha256.New()} }

func (s *spool) Write(p []byte) (int, error) {
	if len(s.head) < 1024 {
		n := min(1024-len(s.head), len(p))
		s.head = append(s.head, p[:n]...)
	}
	s.sum.Write(p)
	s.size += int64(len(p))
	if s.file == nil && s.buf.Len()+len(p) <= memLimit {
		return s.buf.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "docintake-upload-*.pdf")
		if err != nil {
			return 0, fmt.Errorf("spool to disk: %w", err)
		}
		// Unlink at once: the data lives while the descriptor is open and
		// nothing is left behind if the process dies.
		_ = os.Remove(f.Name())
		if _, err := f.Write(s.buf.Bytes()); err != nil {
			_ = f.Close()
			return 0, fmt.Errorf("spool to disk: %w", err)
		}
		s.buf = bytes.Buffer{}
		s.file = f
	}
	return s.file.Write(p)
}

// Reader returns the spooled bytes from the start.
func (s *spool) Reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.buf.Bytes()), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind spool: %w", err)
	}
	return s.file, nil
}

func (s *spool) SHA256() []byte { return s.sum.Sum(nil) }

func (s *spool) Close() error {
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}

// isPDF sniffs the content, as the contract says: the bytes must start with
// "%PDF-". File names and content types are not trusted.
func isPDF(head []byte) bool {
	return bytes.HasPrefix(head, []byte("%PDF-"))
}

// isTooLarge reports whether err comes from http.MaxBytesReader.
func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
