package objectstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/repotest"
)

// BenchmarkS3PutGet stores and reads back a 100 KB object (an uploaded PDF)
// with a known SHA-256, as ingest and the processor do, and reports the
// client's CPU per put+get pair as cpu-µs/op (the S3 server is another
// process, so this is the client's share only): path=lean is the store's own
// PutSHA256 and Get, path=sdk the SDK's PutObject and GetObject through
// Client() on the same connections, signing the same digest.
func BenchmarkS3PutGet(b *testing.B) {
	st := objectstoretest.S3(b)
	body := make([]byte, 100<<10)
	for i := range body {
		body[i] = byte(rand.Uint32())
	}
	sum := sha256.Sum256(body)
	ctx := context.Background()
	paths := []struct {
		name string
		put  func(key string) error
		get  func(key string) (io.ReadCloser, error)
	}{
		{
			name: "lean",
			put: func(key string) error {
				return st.PutSHA256(ctx, key, bytes.NewReader(body), int64(len(body)), "application/pdf", sum[:])
			},
			get: func(key string) (io.ReadCloser, error) { return st.Get(ctx, key) },
		},
		{
			name: "sdk",
			put: func(key string) error {
				_, err := st.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(st.Bucket()), Key: aws.String(key),
					Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))), ContentType: aws.String("application/pdf")},
					objectstore.SDKPayloadSHA256(hex.EncodeToString(sum[:])))
				return err
			},
			get: func(key string) (io.ReadCloser, error) {
				out, err := st.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(st.Bucket()), Key: aws.String(key)})
				if err != nil {
					return nil, err
				}
				return out.Body, nil
			},
		},
	}
	for _, p := range paths {
		b.Run("path="+p.name, func(b *testing.B) {
			start := repotest.ProcessCPU(b)
			for i := 0; b.Loop(); i++ {
				key := "bench/" + strconv.Itoa(i%64)
				if err := p.put(key); err != nil {
					b.Fatal(err)
				}
				rc, err := p.get(key)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, rc)
				rc.Close()
				if err != nil || n != int64(len(body)) {
					b.Fatalf("read %d bytes: %v", n, err)
				}
			}
			b.ReportMetric(float64(repotest.ProcessCPU(b)-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		})
	}
}
