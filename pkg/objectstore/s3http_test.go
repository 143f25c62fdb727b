package objectstore

// Tests of the lean request path against httptest servers and against the
// SDK's own requests; the behaviour against a real S3 server is in
// store_test.go.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/encoding/httpbinding"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/document"
)

// recorded is a request as the transport saw it, body included.
type recorded struct {
	req  *http.Request
	body []byte
}

// recorder is an http.RoundTripper that records requests and answers each
// with 200 and a small body, without a network.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req: req, body: body})
	r.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: req}, nil
}

// last returns the request recorded last and forgets all.
func (r *recorder) last(t *testing.T) recorded {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.reqs, "no request sent")
	last := r.reqs[len(r.reqs)-1]
	r.reqs = nil
	return last
}

// sdkComparable removes from the SDK's requests, before it signs them, what
// only the SDK sends: its invocation id and attempt headers and the
// informational x-id query parameter. Everything else it signs is what the
// lean path must sign too.
func sdkComparable(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Finalize.Insert(middleware.FinalizeMiddlewareFunc("sdkComparable",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				req := in.Request.(*smithyhttp.Request)
				req.Header.Del("Amz-Sdk-Invocation-Id")
				req.Header.Del("Amz-Sdk-Request")
				q := req.URL.Query()
				q.Del("x-id")
				req.URL.RawQuery = q.Encode()
				return next.HandleFinalize(ctx, in)
			}), "Signing", middleware.Before)
	})
}

// sdkPayloadSHA256 makes the SDK sign a known payload digest, as PutSHA256
// did when it went through the SDK.
func sdkPayloadSHA256(hexSum string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("payloadSHA256",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					return next.HandleFinalize(v4.SetPayloadHash(ctx, hexSum), in)
				}), middleware.Before)
		})
	}
}

// TestSignatureMatchesSDK proves signing equivalence: for the same
// operation at the same instant, the lean path sends the URL, signed headers,
// body and Authorization header that the SDK's own client sends.
func TestSignatureMatchesSDK(t *testing.T) {
	t.Parallel()
	keys := []string{
		"sources/2025/01/02/L-1.pdf",
		"with space/and+plus=equals~tilde%percent",
		"unicode/äöü€😀/ünïcödé.pdf",
		"reserved/!*'();:@&$,?#[]",
	}
	configs := map[string]S3Config{
		"PathStyle":   {Endpoint: "http://127.0.0.1:9000", PathStyle: true},
		"VirtualHost": {Endpoint: "http://s3.test:9000"},
		"HTTPS":       {Endpoint: "https://s3.test", PathStyle: true},
		"AWS":         {Region: "eu-central-1"},
	}
	body := []byte("%PDF-1.7 signed body")
	sum := sha256.Sum256(body)
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			cfg.Bucket, cfg.AccessKey, cfg.SecretKey = "intake", "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
			cfg.HTTPClient = &http.Client{Transport: rec}
			st, err := NewS3(cfg)
			require.NoError(t, err)
			ctx := t.Context()

			type op struct {
				sdk  func() error
				lean func() error
			}
			ops := map[string]op{
				"HeadBucket": {
					sdk: func() error {
						_, err := st.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("intake")}, sdkComparable)
						return err
					},
					lean: func() error { return st.Ping(ctx) },
				},
			}
			for i, key := range keys {
				ops["PutObject"+string(rune('A'+i))] = op{
					sdk: func() error {
						_, err := st.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("intake"), Key: aws.String(key),
							Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/pdf")}, sdkComparable)
						return err
					},
					lean: func() error {
						return st.Put(ctx, key, bytes.NewReader(body), int64(len(body)), "application/pdf")
					},
				}
				ops["GetObject"+string(rune('A'+i))] = op{
					sdk: func() error {
						out, err := st.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("intake"), Key: aws.String(key)}, sdkComparable)
						if err == nil {
							_ = out.Body.Close()
						}
						return err
					},
					lean: func() error {
						rc, err := st.Get(ctx, key)
						if err == nil {
							_ = rc.Close()
						}
						return err
					},
				}
				ops["DeleteObject"+string(rune('A'+i))] = op{
					sdk: func() error {
						_, err := st.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("intake"), Key: aws.String(key)}, sdkComparable)
						return err
					},
					lean: func() error { return st.Delete(ctx, key) },
				}
			}
			ops["PutSHA256"] = op{
				sdk: func() error {
					_, err := st.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("intake"), Key: aws.String(keys[0]),
						Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/pdf")},
						sdkComparable, sdkPayloadSHA256(hex.EncodeToString(sum[:])))
					return err
				},
				lean: func() error {
					return st.PutSHA256(ctx, keys[0], bytes.NewReader(body), int64(len(body)), "application/pdf", sum[:])
				},
			}
			ops["PutStreamNoContentType"] = op{
				sdk: func() error {
					_, err := st.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("intake"), Key: aws.String(keys[1]),
						Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))}, sdkComparable)
					return err
				},
				lean: func() error {
					return st.Put(ctx, keys[1], struct{ io.Reader }{bytes.NewReader(body)}, -1, "")
				},
			}
			ops["PutEmpty"] = op{
				sdk: func() error {
					_, err := st.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("intake"), Key: aws.String(keys[2]),
						Body: bytes.NewReader(nil), ContentLength: aws.Int64(0)}, sdkComparable)
					return err
				},
				lean: func() error { return st.Put(ctx, keys[2], bytes.NewReader(nil), 0, "") },
			}

			for name, o := range ops {
				// Subtests share the store's clock: not parallel.
				t.Run(name, func(t *testing.T) {
					require.NoError(t, o.sdk())
					want := rec.last(t)
					at, err := time.Parse("20060102T150405Z", want.req.Header.Get("X-Amz-Date"))
					require.NoError(t, err)
					st.now = func() time.Time { return at }
					require.NoError(t, o.lean())
					got := rec.last(t)

					require.Equal(t, want.req.Method, got.req.Method)
					require.Equal(t, want.req.URL.String(), got.req.URL.String())
					require.Equal(t, want.req.URL.EscapedPath(), got.req.URL.EscapedPath(), "the path on the wire")
					require.Equal(t, want.req.ContentLength, got.req.ContentLength)
					require.Equal(t, string(want.body), string(got.body))
					auth := want.req.Header.Get("Authorization")
					require.NotEmpty(t, auth)
					signed := auth[strings.Index(auth, "SignedHeaders=")+len("SignedHeaders=") : strings.Index(auth, ", Signature=")]
					for h := range strings.SplitSeq(signed, ";") {
						require.Equal(t, want.req.Header.Values(h), got.req.Header.Values(h), "signed header %s", h)
					}
					require.Equal(t, auth, got.req.Header.Get("Authorization"))
				})
			}
		})
	}
}

func TestEscapeKeyMatchesSDK(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for c := 0x20; c < 0x7f; c++ {
		all.WriteByte(byte(c))
	}
	for _, key := range []string{"plain/key.pdf", "a b", "ü/€/😀", "+%=~", all.String()} {
		require.Equal(t, httpbinding.EscapePath(key, false), escapeKey(key), key)
	}
}

func TestAnonymousRequestsUnsigned(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	st, err := NewS3(S3Config{Endpoint: "http://127.0.0.1:9000", PathStyle: true, Bucket: "public", HTTPClient: &http.Client{Transport: rec}})
	require.NoError(t, err)
	require.NoError(t, st.Put(t.Context(), "a b", strings.NewReader("x"), 1, ""))
	got := rec.last(t)
	require.Empty(t, got.req.Header.Get("Authorization"))
	require.Empty(t, got.req.Header.Get("X-Amz-Content-Sha256"))
	require.Equal(t, "/public/a%20b", got.req.URL.EscapedPath())
	require.Equal(t, []byte("x"), got.body)
}

// fakeS3 is an httptest server whose handler answers attempt n (from 1)
// with respond(n, request body).
type fakeS3 struct {
	srv      *httptest.Server
	attempts atomic.Int32
	bodies   chan []byte // every attempt's request body
}

func newFakeS3(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request)) (*S3, *fakeS3) {
	t.Helper()
	f := &fakeS3{bodies: make(chan []byte, 10)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.bodies <- b
		respond(int(f.attempts.Add(1)), w, r)
	}))
	t.Cleanup(f.srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	st, err := NewS3(S3Config{Endpoint: f.srv.URL, PathStyle: true, Bucket: "b", AccessKey: "a", SecretKey: "s",
		HTTPClient: &http.Client{Transport: tr}})
	require.NoError(t, err)
	st.retryer = newRetryer(backoff(time.Millisecond))
	return st, f
}

// backoff makes a retryer wait d before every retry.
func backoff(d time.Duration) func(*retry.StandardOptions) {
	return func(o *retry.StandardOptions) {
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return d, nil })
	}
}

func s3ErrorBody(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>test says `+code+`</Message><RequestId>req-1</RequestId></Error>`)
}

func TestRetryTransientThenSucceed(t *testing.T) {
	t.Parallel()
	failures := map[string]func(w http.ResponseWriter){
		"503":      func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
		"SlowDown": func(w http.ResponseWriter) { s3ErrorBody(w, http.StatusServiceUnavailable, "SlowDown") },
		"500":      func(w http.ResponseWriter) { s3ErrorBody(w, http.StatusInternalServerError, "InternalError") },
		"RequestTimeout": func(w http.ResponseWriter) {
			s3ErrorBody(w, http.StatusBadRequest, "RequestTimeout")
		},
		"ConnectionDropped": func(w http.ResponseWriter) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		},
	}
	for name, fail := range failures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, f := newFakeS3(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if n <= 2 {
					fail(w)
					return
				}
				_, _ = io.WriteString(w, "stored")
			})
			body := []byte("replayed body")
			require.NoError(t, st.Put(t.Context(), "k", bytes.NewReader(body), int64(len(body)), ""))
			require.EqualValues(t, 3, f.attempts.Load())
			for range 3 {
				require.Equal(t, body, <-f.bodies, "every attempt sends the whole body")
			}
		})
	}
}

func TestRetryGiveUpAfterThreeAttempts(t *testing.T) {
	t.Parallel()
	st, f := newFakeS3(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		s3ErrorBody(w, http.StatusServiceUnavailable, "SlowDown")
	})
	_, err := st.Get(t.Context(), "k")
	require.Error(t, err)
	require.EqualValues(t, 3, f.attempts.Load())
	var se *s3Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusServiceUnavailable, se.Status)
	require.Equal(t, "SlowDown", se.Code)
	require.Equal(t, document.EINTERNAL, document.ErrorKind(err))
}

func TestNoRetryOnClientErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		code   string
	}{{403, "AccessDenied"}, {403, "SignatureDoesNotMatch"}, {400, "InvalidArgument"}, {404, "NoSuchBucket"}} {
		t.Run(c.code, func(t *testing.T) {
			t.Parallel()
			st, f := newFakeS3(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Date", time.Now().UTC().Format(http.TimeFormat))
				s3ErrorBody(w, c.status, c.code)
			})
			err := st.Put(t.Context(), "k", strings.NewReader("x"), 1, "")
			require.Error(t, err)
			require.EqualValues(t, 1, f.attempts.Load(), "4xx is not retried")
			var se *s3Error
			require.ErrorAs(t, err, &se)
			require.Equal(t, c.status, se.Status)
			require.Equal(t, c.code, se.Code)
			require.Equal(t, "test says "+c.code, se.Message)
			require.Equal(t, "req-1", se.RequestID)
			require.NotEqual(t, document.ENOTFOUND, document.ErrorKind(err))
		})
	}
}

func TestNotFoundResponses(t *testing.T) {
	t.Parallel()
	for name, respond := range map[string]func(w http.ResponseWriter){
		"NoSuchKey": func(w http.ResponseWriter) { s3ErrorBody(w, http.StatusNotFound, "NoSuchKey") },
		"BareBody":  func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, _ := newFakeS3(t, func(_ int, w http.ResponseWriter, _ *http.Request) { respond(w) })
			_, err := st.Get(t.Context(), "k")
			require.Equal(t, document.ENOTFOUND, document.ErrorKind(err), "%v", err)
			require.NoError(t, st.Delete(t.Context(), "k"))
		})
	}
	// A missing bucket is not a missing object.
	st, _ := newFakeS3(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		s3ErrorBody(w, http.StatusNotFound, "NoSuchBucket")
	})
	_, err := st.Get(t.Context(), "k")
	require.Equal(t, document.EINTERNAL, document.ErrorKind(err), "%v", err)
}

// A request cancelled between attempts stops at once with the context's
// error, and so does one cancelled while the server answers: the caller is
// told it was cancelled, not handed the answer as if the server had failed.
func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	st, f := newFakeS3(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	ctx, cancel := context.WithCancel(t.Context())
	// The retryer asks for the delay after the first attempt failed and
	// before it waits: cancel there.
	st.retryer = newRetryer(func(o *retry.StandardOptions) {
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) {
			cancel()
			return time.Hour, nil
		})
	})
	_, err := st.Get(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.EqualValues(t, 1, f.attempts.Load())
}

func TestCancelWhileServerAnswers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	st, f := newFakeS3(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		cancel()
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	_, err := st.Get(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.EqualValues(t, 1, f.attempts.Load())
}

func TestCancelledBeforeSend(t *testing.T) {
	t.Parallel()
	st, f := newFakeS3(t, func(int, http.ResponseWriter, *http.Request) {})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, st.Put(ctx, "k", strings.NewReader("x"), 1, ""), context.Canceled)
	_, err := st.Get(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, st.Delete(ctx, "k"), context.Canceled)
	require.ErrorIs(t, st.Ping(ctx), context.Canceled)
	require.Zero(t, f.attempts.Load())
}

// A server whose clock is an hour ahead refuses the first signature; the
// store adopts the server's clock and the retry is signed with it.
func TestClockSkewCorrected(t *testing.T) {
	t.Parallel()
	ahead := time.Hour
	st, f := newFakeS3(t, func(n int, w http.ResponseWriter, r *http.Request) {
		server := time.Now().Add(ahead)
		w.Header().Set("Date", server.UTC().Format(http.TimeFormat))
		signed, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
		if err != nil || signed.Sub(server).Abs() > 15*time.Minute {
			s3ErrorBody(w, http.StatusForbidden, "RequestTimeTooSkewed")
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	require.NoError(t, st.Delete(t.Context(), "k"))
	require.EqualValues(t, 2, f.attempts.Load())
	require.NoError(t, st.Delete(t.Context(), "k"))
	require.EqualValues(t, 3, f.attempts.Load(), "later requests are signed with the corrected clock")
}

// Retries draw on the store's quota: with tokens for one retry, a request
// that keeps failing is sent twice, and the next one, finding the quota
// spent, once.
func TestRetryQuota(t *testing.T) {
	t.Parallel()
	st, f := newFakeS3(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	st.retryer = newRetryer(backoff(time.Millisecond), func(o *retry.StandardOptions) {
		o.RateLimiter = ratelimit.NewTokenRateLimit(retry.DefaultRetryCost)
	})
	require.Error(t, st.Ping(t.Context()))
	require.EqualValues(t, 2, f.attempts.Load(), "one retry paid for")
	err := st.Ping(t.Context())
	require.Error(t, err)
	require.EqualValues(t, 3, f.attempts.Load(), "no retry without quota")
	var qe ratelimit.QuotaExceededError
	require.ErrorAs(t, err, &qe)
	var se *s3Error
	require.ErrorAs(t, err, &se, "the server's answer is still the error")
	require.Equal(t, http.StatusServiceUnavailable, se.Status)
}

// A server whose certificate does not verify is not asked again: no
// transient failure, whatever the SDK's retryer makes of a send error.
func TestNoRetryOnBadCertificate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var handshakes atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			handshakes.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone() // trusts no test certificate
	t.Cleanup(tr.CloseIdleConnections)
	st, err := NewS3(S3Config{Endpoint: srv.URL, PathStyle: true, Bucket: "b", AccessKey: "a", SecretKey: "s",
		HTTPClient: &http.Client{Transport: tr}})
	require.NoError(t, err)
	st.retryer = newRetryer(backoff(time.Millisecond))
	err = st.Ping(t.Context())
	var cert *tls.CertificateVerificationError
	require.ErrorAs(t, err, &cert)
	require.EqualValues(t, 1, handshakes.Load(), "one connection, no retry")
}
