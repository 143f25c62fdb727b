package objectstore

// The lean request path: PutObject (one request), GetObject, DeleteObject and
// HeadBucket are built as plain *http.Request values, signed with the SDK's
// own SigV4 signer and sent through the store's http.Client. Going through
// the SDK's operation stack (middleware, endpoint rules, retry bookkeeping,
// response deserialisation) cost about a third of the client CPU of a 100 KB
// put+get pair (BenchmarkS3PutGet); these four requests are what every
// document does, so they skip it. What the stack did for them is redone here:
// addressing (resolved once by the SDK's endpoint rules in NewS3), SigV4
// signing with S3's path escaping, the error body, retries (the SDK's own
// standard retryer, shared with the SDK client), and clock skew correction.

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/encoding/httpbinding"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const (
	// emptySHA256 is the payload hash of a request without a body.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	// unsignedPayload is the payload hash the SDK signs for PutObject over
	// TLS when no digest is known: TLS protects the bytes, so the body is not
	// read twice.
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// continueThreshold is the body size from which a put asks for
	// "100-continue" (the SDK's default), so that a refused request does not
	// send megabytes first.
	continueThreshold = 2 << 20
	// maxErrorBody bounds how much of an error response is read.
	maxErrorBody = 64 << 10
	// maxDrain is how much of an unread response body is discarded to keep
	// the connection; beyond it closing the connection is cheaper.
	maxDrain = 256 << 10
)

// skewThreshold is how far the server's clock may be from ours before a
// signature error is taken for clock skew (the SDK's retry middleware uses
// the same).
const skewThreshold = 4 * time.Minute

// skewCodes are the error codes a request signed with a wrong clock gets; they
// are retried only when the response's Date shows the skew.
var skewCodes = map[string]bool{
	"RequestTimeTooSkewed": true, "SignatureDoesNotMatch": true, "InvalidSignatureException": true,
	"AuthFailure": true, "AccessDeniedException": true,
}

// s3Error is an S3 error response: the HTTP status and the code and message
// of its XML body (or, for a body-less response such as HEAD's, the status
// text as the code, "NotFound" for 404, as the SDK derives it). It satisfies
// smithy.APIError, so it is classified like the SDK's errors.
type s3Error struct {
	Status    int
	Code      string
	Message   string
	RequestID string

	// skewed marks a signature error caused by our clock, worth a retry.
	skewed bool
}

var _ smithy.APIError = (*s3Error)(nil)

func (e *s3Error) Error() string {
	s := fmt.Sprintf("s3: %d %s", e.Status, e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RequestID != "" {
		s += " (request id " + e.RequestID + ")"
	}
	return s
}

// ErrorCode returns the S3 error code, e.g. "NoSuchKey".
func (e *s3Error) ErrorCode() string { return e.Code }

// ErrorMessage returns the server's message.
func (e *s3Error) ErrorMessage() string { return e.Message }

// ErrorFault tells whether the server or the client is to blame.
func (e *s3Error) ErrorFault() smithy.ErrorFault {
	if e.Status >= 500 {
		return smithy.FaultServer
	}
	return smithy.FaultClient
}

// HTTPStatusCode returns the response's status.
func (e *s3Error) HTTPStatusCode() int { return e.Status }

// readS3Error turns a non-2xx response into an *s3Error, reading at most
// maxErrorBody of it, and closes the body.
func readS3Error(resp *http.Response) *s3Error {
	defer closeBody(resp.Body)
	e := &s3Error{Status: resp.StatusCode}
	var body struct {
		Code      string `xml:"Code"`
		Message   string `xml:"Message"`
		RequestID string `xml:"RequestId"`
	}
	// An unparsable body leaves the code to the status, as in the SDK.
	if err := xml.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&body); err == nil {
		e.Code, e.Message, e.RequestID = body.Code, body.Message, body.RequestID
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Amz-Request-Id")
	}
	if e.Code == "" && e.Message == "" {
		text := http.StatusText(resp.StatusCode)
		e.Code, e.Message = strings.ReplaceAll(text, " ", ""), text
	}
	return e
}

// closeBody discards up to maxDrain unread bytes, so that the connection can
// be reused, and closes the body.
func closeBody(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	_ = body.Close()
}

// s3Request is one lean S3 request, replayable across attempts.
type s3Request struct {
	method string
	url    string
	// body, if any, is sent from offset start for size bytes.
	body        io.ReadSeeker
	start, size int64
	contentType string
	// payloadHash is the hex SHA-256 of the body, emptySHA256 without one,
	// or unsignedPayload.
	payloadHash string
}

// objectURL is the URL of key: the bucket's URL (as the SDK's endpoint rules
// resolve it, path-style or virtual-hosted) plus the key escaped as SigV4 and
// S3 want it, every byte but the unreserved ones and '/' percent-encoded.
func (s *S3) objectURL(key string) string {
	return s.bucketURL + "/" + escapeKey(key)
}

// emptyHash is the payload hash of a request without a body ("" when
// requests are not signed).
func (s *S3) emptyHash() string {
	if s.anonymous {
		return ""
	}
	return emptySHA256
}

// escapeKey escapes key like the SDK's serializer (httpbinding.EscapePath
// without encoding '/'), skipping the work for keys that need none, such
// as SourceKey's and ResultKey's.
func escapeKey(key string) string {
	for i := 0; i < len(key); i++ {
		if !unreserved(key[i]) && key[i] != '/' {
			return httpbinding.EscapePath(key, false)
		}
	}
	return key
}

// unreserved reports whether RFC 3986 leaves c unescaped.
func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// newRetryer is the SDK's standard retryer (aws/retry: attempts, jittered
// backoff, the retry quota, which errors are transient) with two additions
// for what the SDK's middleware decides before its retryer is asked: a
// signature error that the server's clock explains is retried (checkSkew),
// and a certificate the server cannot prove is not, being no transient
// failure. NewS3 gives one to the SDK client too, so multipart uploads and
// the lean requests share one quota as one SDK client's operations do.
func newRetryer(opts ...func(*retry.StandardOptions)) *retry.Standard {
	return retry.NewStandard(append([]func(*retry.StandardOptions){func(o *retry.StandardOptions) {
		o.Retryables = append([]retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			var se *s3Error
			if errors.As(err, &se) && se.skewed {
				return aws.TrueTernary
			}
			var cert *tls.CertificateVerificationError
			if errors.As(err, &cert) {
				return aws.FalseTernary
			}
			return aws.UnknownTernary
		})}, o.Retryables...)
	}}, opts...)...)
}

// do sends r, retrying what the store's retryer calls transient (network
// errors, as every request here is idempotent; 500/502/503/504; throttling
// and timeout codes; signature errors that the server's clock explains),
// the way the SDK's retry middleware drives it: an attempt token whose
// release refills the quota on success, a retry token per retry, the
// retryer's backoff between attempts. (The middleware's AWS_NEW_RETRIES_2026
// variant counts attempts for the backoff from 0; this follows the default.)
// On success the response is returned with its body unread; any other
// response is read into an *s3Error and closed.
func (s *S3) do(ctx context.Context, r *s3Request) (*http.Response, error) {
	releaseRetry := func(error) error { return nil }
	for attempt := 1; ; attempt++ {
		releaseAttempt, err := s.retryer.GetAttemptToken(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3: attempt token: %w", err)
		}
		resp, err := s.attempt(ctx, r)
		_ = releaseRetry(err)
		_ = releaseAttempt(err)
		if err == nil {
			return resp, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(err, ctxErr) {
				return nil, err
			}
			// Cancelled while the server was answering: the caller is
			// told so, as it would be during the backoff.
			return nil, fmt.Errorf("%w (after: %w)", ctxErr, err)
		}
		if !s.retryer.IsErrorRetryable(err) {
			return nil, err
		}
		if attempt >= s.retryer.MaxAttempts() {
			return nil, &retry.MaxAttemptsError{Attempt: attempt, Err: err}
		}
		var quotaErr error
		if releaseRetry, quotaErr = s.retryer.GetRetryToken(ctx, err); quotaErr != nil {
			return nil, fmt.Errorf("%w (not retried: %w)", err, quotaErr)
		}
		delay, delayErr := s.retryer.RetryDelay(attempt, err)
		if delayErr != nil {
			return nil, fmt.Errorf("%w (not retried: %w)", err, delayErr)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (retrying after: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// attempt builds, signs and sends r once.
func (s *S3) attempt(ctx context.Context, r *s3Request) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, nil)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		if r.size == 0 {
			// A non-nil body with ContentLength 0 would be sent chunked.
			req.Body = http.NoBody
		} else {
			body := &replayBody{rs: r.body, start: r.start, size: r.size}
			defer body.close()
			if req.Body, err = body.open(); err != nil {
				return nil, err
			}
			// Lets the transport resend the body itself when a kept-alive
			// connection turns out closed before anything was written.
			req.GetBody = body.open
			req.ContentLength = r.size
			if r.size >= continueThreshold {
				req.Header.Set("Expect", "100-continue")
			}
		}
		ct := r.contentType
		if ct == "" {
			ct = "application/octet-stream" // what the SDK sent
		}
		req.Header.Set("Content-Type", ct)
	}
	// The SDK asks for the bytes as stored, which also keeps net/http from
	// transparently decompressing an object stored gzip-encoded.
	req.Header.Set("Accept-Encoding", "identity")
	if !s.anonymous {
		req.Header.Set("X-Amz-Content-Sha256", r.payloadHash)
		at := s.now().Add(time.Duration(s.skew.Load()))
		if err := s.signer.SignHTTP(ctx, s.creds, req, r.payloadHash, "s3", s.region, at); err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
	}
	resp, err := s.httpc.Do(req)
	if err != nil {
		// What the SDK's HTTP client returns for any failure to send or to
		// read the answer's head; the retryer retries it as a connection
		// error.
		return nil, &smithyhttp.RequestSendError{Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	se := readS3Error(resp)
	s.checkSkew(se, resp.Header.Get("Date"))
	return nil, se
}

// checkSkew corrects the signing clock when a signature error comes with a
// Date header that is more than skewThreshold away from the time we signed
// with, and marks the error for a retry (the SDK's clock skew correction).
func (s *S3) checkSkew(se *s3Error, date string) {
	if !skewCodes[se.Code] || date == "" {
		return
	}
	server, err := http.ParseTime(date)
	if err != nil {
		return
	}
	candidate := server.Sub(s.now())
	if d := candidate - time.Duration(s.skew.Load()); d > skewThreshold || d < -skewThreshold {
		s.skew.Store(int64(candidate))
		se.skewed = true
	}
}

// replayBody hands each attempt (and each resend by the transport) a reader
// over the same bytes of a seeker. net/http may still read a request body
// after Do returned, so a body's reader is closed before the seeker is
// rewound for the next one.
type replayBody struct {
	rs          io.ReadSeeker
	start, size int64

	mu  sync.Mutex
	cur *attemptReader
}

func (b *replayBody) open() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil {
		_ = b.cur.Close()
	}
	if _, err := b.rs.Seek(b.start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind body: %w", err)
	}
	b.cur = &attemptReader{r: io.LimitReader(b.rs, b.size)}
	return b.cur, nil
}

func (b *replayBody) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil {
		_ = b.cur.Close()
	}
}

// attemptReader reads until closed; Close waits for a Read in progress.
type attemptReader struct {
	mu     sync.Mutex
	r      io.Reader
	closed bool
}

var errBodyClosed = errors.New("request body read after its attempt ended")

func (a *attemptReader) Read(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, errBodyClosed
	}
	return a.r.Read(p)
}

func (a *attemptReader) Close() error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	return nil
}

// payloadHash returns the SigV4 payload hash of the size bytes of rs from
// its current offset, leaving the offset where it was: UNSIGNED-PAYLOAD over
// TLS, as the SDK signs PutObject there, else the SHA-256 of the bytes.
func (s *S3) payloadHash(rs io.ReadSeeker, size int64) (string, error) {
	if s.tls {
		return unsignedPayload, nil
	}
	if size == 0 {
		return emptySHA256, nil
	}
	start, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return "", err
	}
	// No LimitReader: it would hide a bytes.Reader's WriteTo and copy
	// through a fresh buffer; the caller checked that size bytes remain.
	h := sha256.New()
	if n, err := io.Copy(h, rs); err != nil {
		return "", err
	} else if n != size {
		return "", fmt.Errorf("body has %d bytes, expected %d", n, size)
	}
	if _, err := rs.Seek(start, io.SeekStart); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
