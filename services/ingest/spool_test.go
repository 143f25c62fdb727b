package ingest

import (
	"bytes"
	"crypto/sha256"
	"io"
	"testing"
)

// Spools share pooled buffers: a spool must see only its own bytes, in
// memory and after spilling to disk, whatever the spools before it held.
func TestSpoolReuseKeepsContentsApart(t *testing.T) {
	for _, size := range []int{100 << 10, 10, memLimit + 1, 3 << 20, 64 << 10} {
		data := bytes.Repeat([]byte{byte(size)}, size)
		sp := newSpool()
		if n, err := io.Copy(sp, bytes.NewReader(data)); err != nil || n != int64(size) {
			t.Fatalf("copy %d bytes: n=%d err=%v", size, n, err)
		}
		r, err := sp.Reader()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("size %d: spool returned %d other bytes", size, len(got))
		}
		if sum := sha256.Sum256(data); !bytes.Equal(sp.SHA256(), sum[:]) || sp.size != int64(size) {
			t.Fatalf("size %d: wrong hash or size %d", size, sp.size)
		}
		if err := sp.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
