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
	"sync"
)

// memLimit is how much of an upload is kept in memory before it spills to a
// temporary file: typical orders (50–500 KB) never touch the disk, a 25 MiB
// scan costs 1 MiB of heap per request instead of 25.
const memLimit = 1 << 20

// Spools reuse their in-memory buffers and copy buffers: a fresh
// bytes.Buffer grows by doubling, so a 100 KB upload left about 260 KB of
// garbage, and io.Copy allocated 32 KB more; together they were 78 % of
// ingest's allocated bytes under load (`make bench -profile`, BENCHMARKS.md).
var (
	spoolBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	copyBufs  = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
)

// spool holds one uploaded file while the rest of the request is read and
// validated, hashing it on the way in. Close returns its memory to a pool:
// nothing may use Reader's bytes afterwards.
type spool struct {
	buf  *bytes.Buffer
	file *os.File
	size int64
	sum  hash.Hash
	head []byte // first bytes, for the %PDF- sniff
}

func newSpool() *spool { return &spool{sum: sha256.New(), buf: spoolBufs.Get().(*bytes.Buffer)} }

// ReadFrom copies r into the spool with a pooled buffer (io.Copy uses it).
func (s *spool) ReadFrom(r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var n int64
	for {
		m, err := r.Read(buf)
		if m > 0 {
			if _, werr := s.Write(buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

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
		s.release()
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

// release returns the in-memory buffer to the pool; buffers that grew past
// the spill threshold are left to the GC.
func (s *spool) release() {
	if s.buf == nil {
		return
	}
	if s.buf.Cap() <= 2*memLimit {
		s.buf.Reset()
		spoolBufs.Put(s.buf)
	}
	s.buf = nil
}

func (s *spool) Close() error {
	s.release()
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}

// isTooLarge reports whether err comes from http.MaxBytesReader.
func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
