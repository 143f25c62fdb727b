package objectstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// DefaultRegion is the region of an S3Config that names none
// (INTAKE_S3_REGION's default).
const DefaultRegion = "us-east-1"

// MinPartSize is the smallest multipart part S3 accepts (except the last).
const MinPartSize = 5 << 20

// maxParts is S3's limit on parts per multipart upload.
const maxParts = 10000

// S3Config configures an S3 store. It is filled by pkg/config from the
// INTAKE_S3_* variables; the store reads no environment itself.
type S3Config struct {
	// Endpoint is the base URL of the S3 server (INTAKE_S3_ENDPOINT), e.g.
	// "http://127.0.0.1:7070". Empty means AWS's regional endpoint.
	Endpoint string
	// Region (INTAKE_S3_REGION). Defaults to DefaultRegion.
	Region string
	// Bucket holding all objects (INTAKE_S3_BUCKET). Required.
	Bucket string
	// AccessKey and SecretKey are static credentials (INTAKE_S3_ACCESS_KEY,
	// INTAKE_S3_SECRET_KEY). Both empty means anonymous requests.
	AccessKey string
	SecretKey string
	// PathStyle addresses buckets as http://host/bucket/key instead of
	// http://bucket.host/key (INTAKE_S3_PATH_STYLE); most self-hosted S3
	// servers (versitygw, MinIO) need it.
	PathStyle bool
	// PartSize is the multipart part size and thereby the most memory one Put
	// of a stream holds. Defaults to MinPartSize (5 MiB); smaller values are
	// raised to it.
	PartSize int64
	// HTTPClient sends every request of the store, the SDK's and the lean
	// path's (tests, proxies). Defaults to a client with the SDK's
	// transport settings, keeping 256 idle connections, and following no
	// redirects.
	HTTPClient *http.Client
}

// S3 is a Store on one bucket of an S3-compatible server.
//
// Put (one request), PutSHA256, Get, Delete and Ping send their requests
// themselves (see s3http.go); multipart uploads, EnsureBucket, List and
// Client go through aws-sdk-go-v2. Both share one http.Client.
type S3 struct {
	client   *s3.Client
	bucket   string
	region   string
	partSize int64
	parts    sync.Pool // *[]byte of partSize, reused across Puts

	// The lean request path.
	httpc     s3.HTTPClient
	bucketURL string // object URLs are bucketURL + "/" + escaped key
	rootURL   string // the bucket itself, for HeadBucket
	tls       bool   // bucketURL is https
	signer    *v4.Signer
	creds     aws.Credentials
	anonymous bool
	retryer   *retry.Standard  // shared with client (newRetryer)
	skew      atomic.Int64     // server clock minus ours in ns (clock skew correction)
	now       func() time.Time // signing clock; tests fix it
}

var _ Store = (*S3)(nil)

// NewS3 builds the client; it does not contact the server (see Ping and
// EnsureBucket). Bad configuration gives a plain error.
func NewS3(cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3: bucket is required")
	}
	if (cfg.AccessKey == "") != (cfg.SecretKey == "") {
		return nil, errors.New("s3: access key and secret key must be set together")
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.PartSize < MinPartSize {
		cfg.PartSize = MinPartSize
	}
	opts := s3.Options{
		Region:       cfg.Region,
		UsePathStyle: cfg.PathStyle,
		// The SDK's default (checksums whenever supported) sends trailing
		// checksums that several S3-compatible servers reject; S3 itself
		// still verifies Content-MD5/SHA-256 signed payloads.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	s := &S3{bucket: cfg.Bucket, region: cfg.Region, partSize: cfg.PartSize,
		signer: v4.NewSigner(func(o *v4.SignerOptions) {
			// S3 signs the path as sent, escaped once; the SDK's s3 client
			// sets the same.
			o.DisableURIPathEscaping = true
		}),
		retryer: newRetryer(),
		now:     time.Now,
	}
	opts.Retryer = s.retryer
	if cfg.AccessKey != "" {
		opts.Credentials = credentials.NewStaticCredentialsProvider(cfg.AccessKey, cfg.SecretKey, "")
		s.creds = aws.Credentials{AccessKeyID: cfg.AccessKey, SecretAccessKey: cfg.SecretKey}
	} else {
		opts.Credentials = aws.AnonymousCredentials{}
		s.anonymous = true
	}
	if cfg.HTTPClient != nil {
		opts.HTTPClient = cfg.HTTPClient
	} else {
		opts.HTTPClient = defaultHTTPClient()
	}
	s.httpc = opts.HTTPClient
	// The SDK's endpoint rules decide the bucket's URL, once: path-style or
	// virtual-hosted, AWS's regional endpoint when Endpoint is empty, the
	// path-style fallback for bucket names that cannot be host names.
	ep, err := s3.NewDefaultEndpointResolverV2().ResolveEndpoint(context.Background(), s3.EndpointParameters{
		Bucket: aws.String(cfg.Bucket), Region: aws.String(cfg.Region),
		Endpoint: opts.BaseEndpoint, ForcePathStyle: aws.Bool(cfg.PathStyle),
	})
	if err != nil {
		return nil, fmt.Errorf("s3: endpoint: %w", err)
	}
	s.rootURL = ep.URI.String()
	s.bucketURL = strings.TrimSuffix(s.rootURL, "/")
	if ep.URI.Path == "" {
		s.rootURL += "/" // virtual-hosted: the bucket is the host
	}
	s.tls = ep.URI.Scheme == "https"
	s.client = s3.New(opts)
	s.parts.New = func() any {
		b := make([]byte, s.partSize)
		return &b
	}
	return s, nil
}

// defaultHTTPClient is the SDK's transport settings with more idle
// connections: it keeps 10 per host, and with more requests in flight
// (32 concurrent uploads) every request beyond ten dialled a new
// connection and closed it afterwards, 5 % of ingest's CPU in connect(2)
// alone (`make bench -profile`). A plain *http.Client, not the SDK's
// buildable one (which s3.New copies), lets the SDK and the lean path
// share the connections.
func defaultHTTPClient() *http.Client {
	tr := awshttp.NewBuildableClient().GetTransport()
	tr.MaxIdleConns = maxIdleConns
	tr.MaxIdleConnsPerHost = maxIdleConns
	return &http.Client{Transport: tr, CheckRedirect: noRedirects}
}

// noRedirects hands redirects back as responses: an S3 redirect (wrong
// region, moved bucket) is an error to report, the SDK's client followed
// none but 307/308, and a put body cannot be replayed to another host.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Bucket returns the bucket name.
func (s *S3) Bucket() string { return s.bucket }

// Client exposes the SDK client for tests and tools (bucket clean-up,
// benchmarks against raw PutObject).
func (s *S3) Client() *s3.Client { return s.client }

// EnsureBucket creates the bucket if it does not exist. Idempotent: a bucket
// that already exists and is ours is success.
func (s *S3) EnsureBucket(ctx context.Context) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(s.bucket)}
	if s.region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(s.region),
		}
	}
	_, err := s.client.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err == nil || errors.As(err, &owned) {
		return nil
	}
	var exists *types.BucketAlreadyExists
	if errors.As(err, &exists) {
		// Some servers answer AlreadyExists also to the owner; HeadBucket
		// tells whether we may use it.
		if perr := s.Ping(ctx); perr == nil {
			return nil
		}
	}
	return fmt.Errorf("create bucket %s: %w", s.bucket, err)
}

// Ping checks that the bucket is reachable with our credentials
// (HeadBucket).
func (s *S3) Ping(ctx context.Context) error {
	resp, err := s.do(ctx, &s3Request{method: http.MethodHead, url: s.rootURL, payloadHash: s.emptyHash()})
	if err != nil {
		return fmt.Errorf("s3 bucket %s: %w", s.bucket, err)
	}
	closeBody(resp.Body)
	return nil
}

// URI returns "s3://bucket/key".
func (s *S3) URI(key string) string { return "s3://" + s.bucket + "/" + key }

// Put uploads the body. A body that is an io.ReadSeeker of known size is
// sent as one PutObject straight from the reader (no copy). Any other body is
// read one part at a time into a pooled PartSize buffer: a body that fits in
// one part becomes a single PutObject, a longer one a multipart upload whose
// parts are sent one after the other, so one Put never holds more than one
// part in memory. A failed multipart upload is aborted. A single PutObject
// that fails transiently is retried (up to three attempts) from the
// seeker's starting offset; over plain HTTP the seeker is read once more to
// hash it for the signature, over HTTPS the payload is sent unsigned, as
// the SDK did.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if rs, ok := r.(io.ReadSeeker); ok && size >= 0 && size <= maxSinglePut {
		return s.putSeeker(ctx, key, rs, size, contentType, "")
	}
	bufp := s.parts.Get().(*[]byte)
	defer s.parts.Put(bufp)
	buf := *bufp

	n, err := io.ReadFull(r, buf)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if size >= 0 && int64(n) != size {
			return sizeMismatch(key, size, int64(n))
		}
		return s.putSeeker(ctx, key, bytes.NewReader(buf[:n]), int64(n), contentType, "")
	case err != nil:
		return wrapErr("put", key, err)
	}
	return s.putMultipart(ctx, key, r, buf, size, contentType)
}

// PutSHA256 is Put for a whole body whose SHA-256 the caller has already
// computed (ingest hashes every upload on the way in): the request is signed
// with sum instead of reading and hashing the body a second time, and the
// server refuses the object when the bytes do not match it.
func (s *S3) PutSHA256(ctx context.Context, key string, r io.ReadSeeker, size int64, contentType string, sum []byte) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if len(sum) != 32 || size < 0 || size > maxSinglePut {
		return s.Put(ctx, key, r, size, contentType)
	}
	return s.putSeeker(ctx, key, r, size, contentType, hex.EncodeToString(sum))
}

// maxIdleConns is how many idle connections to the S3 server a store keeps
// for reuse (more than any service has requests in flight).
const maxIdleConns = 256

// maxSinglePut is S3's limit for one PutObject.
const maxSinglePut = 5 << 30

// putSeeker stores the size bytes of body from its offset with one
// PutObject. hexSum, when not empty, is their SHA-256 in hex.
func (s *S3) putSeeker(ctx context.Context, key string, body io.ReadSeeker, size int64, contentType, hexSum string) error {
	// Exactly size bytes are sent; check that the seeker holds that many so
	// a wrong size fails like it does in the other paths.
	start, remaining, err := remainingLen(body)
	if err != nil {
		return wrapErr("put", key, err)
	} else if remaining != size {
		return sizeMismatch(key, size, remaining)
	}
	switch {
	case s.anonymous:
		hexSum = ""
	case hexSum == "":
		if hexSum, err = s.payloadHash(body, size); err != nil {
			return wrapErr("put", key, err)
		}
	}
	resp, err := s.do(ctx, &s3Request{method: http.MethodPut, url: s.objectURL(key),
		body: body, start: start, size: size, contentType: contentType, payloadHash: hexSum})
	if err != nil {
		return wrapErr("put", key, err)
	}
	closeBody(resp.Body)
	return nil
}

// remainingLen returns the current offset and the bytes between it and the
// end, leaving the offset unchanged.
func remainingLen(rs io.Seeker) (cur, n int64, err error) {
	if cur, err = rs.Seek(0, io.SeekCurrent); err != nil {
		return 0, 0, err
	}
	end, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, 0, err
	}
	if _, err := rs.Seek(cur, io.SeekStart); err != nil {
		return 0, 0, err
	}
	return cur, end - cur, nil
}

// putMultipart uploads first (a full part already read) and the rest of r.
func (s *S3) putMultipart(ctx context.Context, key string, r io.Reader, first []byte, size int64, contentType string) (err error) {
	create := &s3.CreateMultipartUploadInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}
	if contentType != "" {
		create.ContentType = aws.String(contentType)
	}
	out, err := s.client.CreateMultipartUpload(ctx, create)
	if err != nil {
		return wrapErr("put", key, err)
	}
	uploadID := out.UploadId
	defer func() {
		if err == nil {
			return
		}
		// Abort even when ctx is cancelled, or the parts stay billed.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: uploadID,
		})
	}()

	var completed []types.CompletedPart
	total := int64(0)
	chunk := first
	for num := int32(1); ; num++ {
		if num > maxParts {
			return wrapErr("put", key, fmt.Errorf("body exceeds %d parts of %d bytes", maxParts, s.partSize))
		}
		part, perr := s.client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket:        aws.String(s.bucket),
			Key:           aws.String(key),
			UploadId:      uploadID,
			PartNumber:    aws.Int32(num),
			Body:          bytes.NewReader(chunk),
			ContentLength: aws.Int64(int64(len(chunk))),
		})
		if perr != nil {
			return wrapErr("put", key, fmt.Errorf("part %d: %w", num, perr))
		}
		completed = append(completed, types.CompletedPart{ETag: part.ETag, PartNumber: aws.Int32(num)})
		total += int64(len(chunk))
		if size >= 0 && total > size {
			return sizeMismatch(key, size, total)
		}

		// The part buffer is free again once UploadPart returned.
		n, rerr := io.ReadFull(r, first[:cap(first)])
		if n == 0 && (errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)) {
			break
		}
		if rerr != nil && !errors.Is(rerr, io.ErrUnexpectedEOF) {
			return wrapErr("put", key, rerr)
		}
		chunk = first[:n]
	}
	if size >= 0 && total != size {
		return sizeMismatch(key, size, total)
	}
	_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          aws.String(s.bucket),
		Key:             aws.String(key),
		UploadId:        uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: completed},
	})
	if err != nil {
		return wrapErr("put", key, err)
	}
	return nil
}

// Get streams the object. ENOTFOUND when the key does not exist.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	resp, err := s.do(ctx, &s3Request{method: http.MethodGet, url: s.objectURL(key), payloadHash: s.emptyHash()})
	if err != nil {
		if isNotFound(err) {
			return nil, notFound(key, err)
		}
		return nil, wrapErr("get", key, err)
	}
	return resp.Body, nil
}

// Delete removes the object; S3 treats a missing key as success.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	resp, err := s.do(ctx, &s3Request{method: http.MethodDelete, url: s.objectURL(key), payloadHash: s.emptyHash()})
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return wrapErr("delete", key, err)
	}
	closeBody(resp.Body)
	return nil
}

// isNotFound recognises a missing key across S3 implementations: the typed
// NoSuchKey, and the bare codes some servers send.
func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return true
	}
	var nf *types.NotFound
	if errors.As(err, &nf) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return true
		}
	}
	return false
}
