package objectstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
)

func TestMain(m *testing.M) { objectstoretest.Main(m) }

// stream returns n deterministic pseudo-random bytes as a plain io.Reader
// (not a Seeker, so stores cannot learn the size) without holding them in
// memory, and the SHA-256 the bytes will have.
func stream(seed uint64, n int64) (io.Reader, [32]byte) {
	h := sha256.New()
	_, _ = io.Copy(h, io.LimitReader(rand.NewChaCha8(seedBytes(seed)), n))
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return struct{ io.Reader }{io.LimitReader(rand.NewChaCha8(seedBytes(seed)), n)}, sum
}

func seedBytes(seed uint64) [32]byte {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return s
}

func readAll(t *testing.T, st objectstore.Store, key string) []byte {
	t.Helper()
	rc, err := st.Get(t.Context(), key)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return b
}

func requireKind(t *testing.T, kind string, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, kind, document.ErrorKind(err), "error: %v", err)
}

// runConformance is the behaviour every Store must show.
func runConformance(t *testing.T, newStore func(t *testing.T) objectstore.Store) {
	t.Run("PutGetKnownSize", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		body := []byte("%PDF-1.4 hello")
		require.NoError(t, st.Put(t.Context(), "sources/2025/01/02/a.pdf", bytes.NewReader(body), int64(len(body)), "application/pdf"))
		require.Equal(t, body, readAll(t, st, "sources/2025/01/02/a.pdf"))
	})
	t.Run("PutUnknownSizeSmall", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		require.NoError(t, st.Put(t.Context(), "k/small", struct{ io.Reader }{strings.NewReader("abc")}, -1, ""))
		require.Equal(t, []byte("abc"), readAll(t, st, "k/small"))
	})
	t.Run("PutEmpty", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		require.NoError(t, st.Put(t.Context(), "k/empty", struct{ io.Reader }{strings.NewReader("")}, -1, ""))
		require.Empty(t, readAll(t, st, "k/empty"))
	})
	t.Run("Overwrite", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		require.NoError(t, st.Put(t.Context(), "k", strings.NewReader("first version"), 13, ""))
		require.NoError(t, st.Put(t.Context(), "k", strings.NewReader("second"), 6, ""))
		require.Equal(t, []byte("second"), readAll(t, st, "k"))
	})
	t.Run("GetMissing", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		_, err := st.Get(t.Context(), "results/2025/01/02/nope.xml")
		requireKind(t, document.ENOTFOUND, err)
	})
	t.Run("Delete", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		require.NoError(t, st.Put(t.Context(), "d/x", strings.NewReader("x"), 1, ""))
		require.NoError(t, st.Delete(t.Context(), "d/x"))
		_, err := st.Get(t.Context(), "d/x")
		requireKind(t, document.ENOTFOUND, err)
		require.NoError(t, st.Delete(t.Context(), "d/x"), "deleting a missing object is not an error")
		require.NoError(t, st.Delete(t.Context(), "d/never-existed"))
	})
	t.Run("InvalidKeys", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		for _, key := range []string{"", "/abs", "../up", "a/../b", `a\b`, "a//b", "a/", ".hidden", "a/./b", "nul\x00", strings.Repeat("k", 1025)} {
			requireKind(t, document.EINVALID, st.Put(t.Context(), key, strings.NewReader("x"), 1, ""))
			_, err := st.Get(t.Context(), key)
			requireKind(t, document.EINVALID, err)
			requireKind(t, document.EINVALID, st.Delete(t.Context(), key))
		}
	})
	t.Run("SizeMismatch", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		cases := map[string]struct {
			r    io.Reader
			size int64
		}{
			"SeekerShorter": {strings.NewReader("abc"), 4},
			"SeekerLonger":  {strings.NewReader("abcde"), 4},
			"StreamShorter": {struct{ io.Reader }{strings.NewReader("abc")}, 4},
			"StreamLonger":  {struct{ io.Reader }{strings.NewReader("abcde")}, 4},
		}
		for name, c := range cases {
			key := "mismatch/" + name
			requireKind(t, document.EINVALID, st.Put(t.Context(), key, c.r, c.size, ""))
			_, err := st.Get(t.Context(), key)
			requireKind(t, document.ENOTFOUND, err)
		}
	})
	t.Run("LargeStreamed", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		// Three parts of the S3 store's 5 MiB, the last one short.
		const n = 2*objectstore.MinPartSize + 123_457
		r, sum := stream(1, n)
		require.NoError(t, st.Put(t.Context(), "big/obj", r, -1, "application/octet-stream"))
		rc, err := st.Get(t.Context(), "big/obj")
		require.NoError(t, err)
		defer rc.Close()
		h := sha256.New()
		got, err := io.Copy(h, rc)
		require.NoError(t, err)
		require.EqualValues(t, n, got)
		require.Equal(t, sum[:], h.Sum(nil))
	})
	t.Run("LargeKnownSizeStream", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		const n = objectstore.MinPartSize + 1
		r, sum := stream(2, n)
		require.NoError(t, st.Put(t.Context(), "big/known", r, n, ""))
		got := readAll(t, st, "big/known")
		require.Equal(t, sum, sha256.Sum256(got))
	})
	t.Run("ReaderError", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		boom := errors.New("client went away")
		for _, n := range []int64{10, objectstore.MinPartSize + 10} {
			r, _ := stream(3, n)
			err := st.Put(t.Context(), "broken", io.MultiReader(r, iotestErrReader{boom}), -1, "")
			require.ErrorIs(t, err, boom)
			_, err = st.Get(t.Context(), "broken")
			requireKind(t, document.ENOTFOUND, err)
		}
	})
	t.Run("CancelledContext", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		require.Error(t, st.Put(ctx, "cancelled", strings.NewReader("x"), 1, ""))
		_, err := st.Get(t.Context(), "cancelled")
		requireKind(t, document.ENOTFOUND, err)
	})
	t.Run("ConcurrentPutsSameKey", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		bodies := make([][]byte, 6)
		for i := range bodies {
			bodies[i] = bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, b := range bodies {
			wg.Go(func() {
				<-start
				require.NoError(t, st.Put(t.Context(), "race/k", bytes.NewReader(b), int64(len(b)), ""))
			})
		}
		close(start)
		wg.Wait()
		require.Contains(t, bodies, readAll(t, st, "race/k"), "the object is one complete body, never a mix")
	})
	t.Run("Ping", func(t *testing.T) {
		t.Parallel()
		require.NoError(t, newStore(t).Ping(t.Context()))
	})
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestFS(t *testing.T) {
	t.Parallel()
	runConformance(t, func(t *testing.T) objectstore.Store {
		st, err := objectstore.NewFS(t.TempDir())
		require.NoError(t, err)
		return st
	})
}

func TestS3(t *testing.T) {
	t.Parallel()
	runConformance(t, func(t *testing.T) objectstore.Store { return objectstoretest.S3(t) })
}

// The same contract with virtual-hosted addressing
// (http://<bucket>.localhost:port/key), for the lean requests and the SDK's.
func TestS3VirtualHosted(t *testing.T) {
	t.Parallel()
	runConformance(t, func(t *testing.T) objectstore.Store {
		st, err := objectstore.NewS3(objectstoretest.VirtualHostConfig(t))
		require.NoError(t, err)
		return st
	})
}

func TestFSURI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := objectstore.NewFS(dir)
	require.NoError(t, err)
	require.Equal(t, "file://"+dir+"/sources/2025/01/02/x.pdf", st.URI("sources/2025/01/02/x.pdf"))
}

func TestFSNoTempFilesLeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := objectstore.NewFS(dir)
	require.NoError(t, err)
	require.NoError(t, st.Put(t.Context(), "a/b", strings.NewReader("ok"), 2, ""))
	require.Error(t, st.Put(t.Context(), "a/c", strings.NewReader("short"), 9, ""))
	entries, err := filepath.Glob(dir + "/a/*") // Glob matches dot files too
	require.NoError(t, err)
	require.Equal(t, []string{dir + "/a/b"}, entries)
}

func TestS3URIAndBucket(t *testing.T) {
	t.Parallel()
	st, err := objectstore.NewS3(objectstore.S3Config{Bucket: "intake", Endpoint: "http://127.0.0.1:1"})
	require.NoError(t, err)
	require.Equal(t, "s3://intake/results/2025/01/02/x.xml", st.URI("results/2025/01/02/x.xml"))

	_, err = objectstore.NewS3(objectstore.S3Config{})
	require.Error(t, err, "bucket is required")
	_, err = objectstore.NewS3(objectstore.S3Config{Bucket: "b", AccessKey: "only-half"})
	require.Error(t, err)
}

func TestS3EnsureBucketAndPing(t *testing.T) {
	t.Parallel()
	cfg := objectstoretest.S3Config(t)
	st, err := objectstore.NewS3(cfg)
	require.NoError(t, err)
	require.NoError(t, st.EnsureBucket(t.Context()), "existing bucket is fine")
	require.NoError(t, st.Ping(t.Context()))

	cfg.Bucket = objectstoretest.BucketName("missing")
	missing, err := objectstore.NewS3(cfg)
	require.NoError(t, err)
	require.Error(t, missing.Ping(t.Context()))

	cfg.SecretKey = "wrong"
	cfg.Bucket = st.Bucket()
	badCreds, err := objectstore.NewS3(cfg)
	require.NoError(t, err)
	require.Error(t, badCreds.Ping(t.Context()))
}

func TestS3ContentTypeAndFailedMultipartAborted(t *testing.T) {
	t.Parallel()
	st := objectstoretest.S3(t)
	require.NoError(t, st.Put(t.Context(), "typed.pdf", strings.NewReader("%PDF-"), 5, "application/pdf"))
	head, err := st.Client().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(st.Bucket()), Key: aws.String("typed.pdf")})
	require.NoError(t, err)
	require.Equal(t, "application/pdf", aws.ToString(head.ContentType))

	r, _ := stream(4, objectstore.MinPartSize+100)
	err = st.Put(t.Context(), "aborted", io.MultiReader(r, iotestErrReader{io.ErrClosedPipe}), -1, "")
	require.ErrorIs(t, err, io.ErrClosedPipe)
	ups, err := st.Client().ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String(st.Bucket())})
	require.NoError(t, err)
	require.Empty(t, ups.Uploads, "the failed multipart upload was aborted")
}

// TestPutMemoryBounded shows that a 25 MiB stream of unknown size is not
// buffered whole: the bytes allocated during Put stay well below the body
// size. It is deliberately not parallel, so that no other test allocates
// while it measures.
func TestPutMemoryBounded(t *testing.T) {
	const n = 25 << 20
	stores := map[string]func(t *testing.T) objectstore.Store{
		"FS": func(t *testing.T) objectstore.Store {
			st, err := objectstore.NewFS(t.TempDir())
			require.NoError(t, err)
			return st
		},
		"S3": func(t *testing.T) objectstore.Store { return objectstoretest.S3(t) },
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			st := newStore(t)
			r, sum := stream(5, n)
			// Warm the part-buffer pool and connections so the measurement
			// shows the steady state of a busy server.
			warm, _ := stream(6, objectstore.MinPartSize+1)
			require.NoError(t, st.Put(t.Context(), "warm", warm, -1, ""))

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			require.NoError(t, st.Put(t.Context(), "big", r, -1, ""))
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: Put of %d MiB allocated %.1f MiB", name, n>>20, float64(allocated)/(1<<20))
			require.Less(t, allocated, uint64(n/2), "Put must not buffer the whole body")

			rc, err := st.Get(t.Context(), "big")
			require.NoError(t, err)
			defer rc.Close()
			h := sha256.New()
			_, err = io.Copy(h, rc)
			require.NoError(t, err)
			require.Equal(t, sum[:], h.Sum(nil))
		})
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	// 23:30 on 31 Dec in UTC-5 is already 1 Jan in UTC: keys use UTC dates.
	at := time.Date(2024, 12, 31, 23, 30, 0, 0, time.FixedZone("EST", -5*3600))
	require.Equal(t, "sources/2025/01/01/L-123.pdf", objectstore.SourceKey("L-123", at))
	require.Equal(t, "results/2025/01/01/L-123.xml", objectstore.ResultKey("L-123", at, "xml"))
	require.NoError(t, objectstore.ValidKey(objectstore.SourceKey("L-123", at)))
	require.NoError(t, objectstore.ValidKey(objectstore.ResultKey("L-123", at, "json")))
}

func TestValidKey(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "a/b/c.pdf", "sources/2025/01/01/x.y.pdf", "a-b_c~d", strings.Repeat("k", 1024)} {
		require.NoError(t, objectstore.ValidKey(ok), ok)
	}
	for _, bad := range []string{"", "/a", "a/", "a//b", "..", "a/..", "../a", ".", "./a", "a/.tmp-1", `a\b`, "a\nb", "a\x7fb", strings.Repeat("k", 1025)} {
		requireKind(t, document.EINVALID, objectstore.ValidKey(bad))
	}
}

// PutSHA256 stores the body under a digest the caller computed; a digest
// that does not match the bytes is refused by the server, not stored.
func TestS3PutSHA256(t *testing.T) {
	t.Parallel()
	st := objectstoretest.S3(t)
	body := []byte("%PDF-1.7 known digest")
	sum := sha256.Sum256(body)
	require.NoError(t, st.PutSHA256(t.Context(), "hashed.pdf", bytes.NewReader(body), int64(len(body)), "application/pdf", sum[:]))
	rc, err := st.Get(t.Context(), "hashed.pdf")
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	rc.Close()
	require.NoError(t, err)
	require.Equal(t, body, got)

	wrong := sha256.Sum256([]byte("other bytes"))
	require.Error(t, st.PutSHA256(t.Context(), "wrong.pdf", bytes.NewReader(body), int64(len(body)), "application/pdf", wrong[:]))
}

// newS3 is a store on cfg whose idle connections are closed when the test
// ends (goleak).
func newS3(t *testing.T, cfg objectstore.S3Config) *objectstore.S3 {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	cfg.HTTPClient = &http.Client{Transport: tr}
	st, err := objectstore.NewS3(cfg)
	require.NoError(t, err)
	return st
}

// Keys with bytes that SigV4 and URLs escape reach the server as the same
// key: readable back, listed under their own name, and the SDK's client
// (which escapes on its own) sees the same objects.
func TestS3KeysNeedingEscaping(t *testing.T) {
	t.Parallel()
	st := objectstoretest.S3(t)
	keys := []string{
		"space/a b.pdf",
		"unicode/äöü €/😀.pdf",
		"plus/a+b",
		"percent/100%",
		"percent/%2F%20",
		"equals/a=b&c=d",
		"tilde/~x",
		"mixed/!*'();:@$,?#[] end",
	}
	for i, key := range keys {
		body := []byte(fmt.Sprintf("body %d of %q", i, key))
		require.NoError(t, st.Put(t.Context(), key, bytes.NewReader(body), int64(len(body)), "text/plain"), key)
		require.Equal(t, body, readAll(t, st, key), key)
		out, err := st.Client().GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(st.Bucket()), Key: aws.String(key)})
		require.NoError(t, err, "the SDK finds %q", key)
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		require.NoError(t, err)
		require.Equal(t, body, got, key)
	}
	var listed []string
	require.NoError(t, st.List(t.Context(), "", func(o objectstore.Object) error {
		listed = append(listed, o.Key)
		return nil
	}))
	require.ElementsMatch(t, keys, listed)

	// Written by the SDK, read and deleted by the lean path.
	const key = "sdk/wrote this+that = ü"
	_, err := st.Client().PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(st.Bucket()), Key: aws.String(key), Body: strings.NewReader("sdk")})
	require.NoError(t, err)
	require.Equal(t, []byte("sdk"), readAll(t, st, key))
	for _, k := range append(keys, key) {
		require.NoError(t, st.Delete(t.Context(), k), k)
		_, err := st.Get(t.Context(), k)
		requireKind(t, document.ENOTFOUND, err)
	}
}

// A store with the wrong secret gets an error from every request, with the
// server's status; never a panic and never ENOTFOUND (the signature is
// refused before the key is looked up).
func TestS3WrongSecret(t *testing.T) {
	t.Parallel()
	cfg := objectstoretest.S3Config(t)
	good := newS3(t, cfg)
	require.NoError(t, good.Put(t.Context(), "exists", strings.NewReader("x"), 1, ""))
	cfg.SecretKey = "wrong"
	bad := newS3(t, cfg)

	_, errExisting := bad.Get(t.Context(), "exists")
	_, errMissing := bad.Get(t.Context(), "missing")
	sum := sha256.Sum256([]byte("x"))
	for name, err := range map[string]error{
		"Put":         bad.Put(t.Context(), "k", strings.NewReader("x"), 1, ""),
		"PutStream":   bad.Put(t.Context(), "k", struct{ io.Reader }{strings.NewReader("x")}, -1, ""),
		"PutSHA256":   bad.PutSHA256(t.Context(), "k", strings.NewReader("x"), 1, "", sum[:]),
		"GetExisting": errExisting,
		"GetMissing":  errMissing,
		"Delete":      bad.Delete(t.Context(), "exists"),
		"Ping":        bad.Ping(t.Context()),
	} {
		require.Error(t, err, name)
		require.Equal(t, document.EINTERNAL, document.ErrorKind(err), "%s: %v", name, err)
		var status interface{ HTTPStatusCode() int }
		require.ErrorAs(t, err, &status, name)
		require.Equal(t, http.StatusForbidden, status.HTTPStatusCode(), "%s: %v", name, err)
	}
	require.Equal(t, []byte("x"), readAll(t, good, "exists"), "the refused delete deleted nothing")
}

func TestS3CancelledContext(t *testing.T) {
	t.Parallel()
	st := objectstoretest.S3(t)
	require.NoError(t, st.Put(t.Context(), "k", strings.NewReader("x"), 1, ""))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := st.Get(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, st.Delete(ctx, "k"), context.Canceled)
	require.ErrorIs(t, st.Ping(ctx), context.Canceled)
	require.Equal(t, []byte("x"), readAll(t, st, "k"))
}

// A seeker is sent from its current offset, also when it is large enough
// for the "100-continue" handshake, with and without a known digest.
func TestS3PutSeekerFromOffset(t *testing.T) {
	t.Parallel()
	st := objectstoretest.S3(t)
	body := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16)
	for name, put := range map[string]func(key string, r io.ReadSeeker, size int64) error{
		"Put": func(key string, r io.ReadSeeker, size int64) error {
			return st.Put(t.Context(), key, r, size, "")
		},
		"PutSHA256": func(key string, r io.ReadSeeker, size int64) error {
			sum := sha256.Sum256(body[7:])
			return st.PutSHA256(t.Context(), key, r, size, "", sum[:])
		},
	} {
		r := bytes.NewReader(body)
		_, err := r.Seek(7, io.SeekStart)
		require.NoError(t, err)
		require.NoError(t, put(name, r, int64(len(body)-7)), name)
		require.Equal(t, body[7:], readAll(t, st, name), name)
	}
}
