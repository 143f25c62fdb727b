// Package objectstore stores document bytes (uploaded PDFs, rendered results)
// behind one small interface with two implementations: S3 (any S3-compatible
// server) and a local filesystem directory for the standalone system.
//
// The S3 store sends the requests every document makes, a PutObject of one
// part, GetObject, DeleteObject and HeadBucket (Ping), as plain net/http
// requests signed with aws-sdk-go-v2's SigV4 signer: the SDK's per-request
// machinery (middleware stack, endpoint resolution, retry bookkeeping,
// response deserialisation) cost about a third of the client CPU of a 100 KB
// put and get (BenchmarkS3PutGet). It keeps the SDK's addressing, signing,
// retries and error codes (s3http.go). Multipart uploads, bucket creation and
// listing, which are rare, go through aws-sdk-go-v2, as does S3.Client.
//
// Keys are chosen by docintake, never derived from client-supplied file names:
// use SourceKey and ResultKey. Both implementations reject keys that could
// escape their namespace (see ValidKey).
//
// # Memory
//
// Put streams: the filesystem store copies through a small buffer, and the S3
// store holds at most one part (S3Config.PartSize, default 5 MiB) of a body
// in memory at a time, so a 25 MiB upload costs about 5 MiB per concurrent
// upload, not 25 MiB.
package objectstore

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/document"
)

// Store is what services need from an object store.
//
// Implementations are safe for concurrent use. Writing one key concurrently
// from several goroutines leaves one of the written bodies, never a mix.
type Store interface {
	// Put stores the body read from r under key, replacing any existing
	// object. size is the body length in bytes or -1 when unknown; when it is
	// known and r yields a different number of bytes, Put fails with EINVALID
	// and stores nothing. An invalid key gives EINVALID.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Get opens the object for reading; the caller closes it. A missing
	// object gives ENOTFOUND, an invalid key EINVALID.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the object. Deleting a missing object is not an error.
	Delete(ctx context.Context, key string) error
	// Ping reports whether the store is reachable and usable (for /readyz).
	Ping(ctx context.Context) error
	// URI names the object for humans and for document details:
	// "s3://bucket/key" or "file:///abs/path".
	URI(key string) string
}

// SourceKey is the key of an uploaded PDF: "sources/YYYY/MM/DD/<log_id>.pdf",
// with the date of t in UTC (the upload time, so keys sort by arrival).
func SourceKey(logID string, t time.Time) string {
	return "sources/" + t.UTC().Format("2006/01/02") + "/" + logID + ".pdf"
}

// ResultKey is the key of a processing result:
// "results/YYYY/MM/DD/<log_id>.<ext>" (ext without the dot, e.g. "xml").
func ResultKey(logID string, t time.Time, ext string) string {
	return "results/" + t.UTC().Format("2006/01/02") + "/" + logID + "." + ext
}

// maxKeyLen is S3's limit on key length in bytes.
const maxKeyLen = 1024

// ValidKey returns nil when key is acceptable to every Store, else an EINVALID
// error. A key is a relative slash-separated path of at most 1024 bytes whose
// segments are non-empty, do not start with "." (this also rules out "." and
// "..", and leaves the dot namespace to the filesystem store's temp files) and
// contain no backslash or control characters.
func ValidKey(key string) error {
	if key == "" || len(key) > maxKeyLen {
		return document.Errorf(document.EINVALID, "object key must have 1 to %d bytes", maxKeyLen)
	}
	for _, c := range key {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return document.Errorf(document.EINVALID, "object key %q contains a backslash or control character", key)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") {
			return document.Errorf(document.EINVALID, "object key %q has an empty or dot segment", key)
		}
	}
	return nil
}

// sizeMismatch is the error for a body whose length differs from the
// announced size.
func sizeMismatch(key string, want, got int64) error {
	return document.Errorf(document.EINVALID, "object %s: body has %d bytes, expected %d", key, got, want)
}

// notFound is the error for a missing object.
func notFound(key string, err error) error {
	e := document.Errorf(document.ENOTFOUND, "object %s not found", key)
	e.Err = err
	return e
}

// wrapErr prefixes err with the operation and key.
func wrapErr(op, key string, err error) error {
	return fmt.Errorf("%s object %s: %w", op, key, err)
}
