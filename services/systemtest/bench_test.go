package systemtest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/standalone/standalonetest"
)

// benchPDF is a ~100 KB PDF: a generated order padded with a comment after
// its last line, which PDF readers ignore.
func benchPDF() []byte {
	pdf := pdftexttest.PDF([]string{"PURCHASE ORDER", "PO Number: 4711"})
	pad := bytes.Repeat([]byte("% padding to the size of a typical scanned-free order PDF\n"), (100<<10-len(pdf))/58+1)
	return append(pdf, pad...)[:100<<10]
}

// latencies collects per-operation durations from parallel goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) report(b *testing.B, elapsed time.Duration) (perSec float64) {
	slices.Sort(l.d)
	q := func(p float64) float64 {
		if len(l.d) == 0 {
			return 0
		}
		return float64(l.d[int(p*float64(len(l.d)-1))].Microseconds()) / 1000
	}
	perSec = float64(len(l.d)) / elapsed.Seconds()
	b.ReportMetric(perSec, "ops/s")
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op") // wall time per op is meaningless with 32 clients; the rate above is the figure
	return perSec
}

// BenchmarkIngest uploads a 100 KB PDF with 32 concurrent clients against the
// standalone system (S3 on versitygw, the processor and dispatcher running
// too), next to a raw PutObject of the same bytes to the same object store in
// the same run: the baseline the upload path is measured against.
//
//	make bench-ingest   (go test -bench BenchmarkIngest -benchtime 20s)
func BenchmarkIngest(b *testing.B) {
	s3cfg := objectstoretest.S3Config(b)
	sys := standalonetest.Start(b, map[string]string{
		"INTAKE_DATABASE_URL":  storetest.SchemaURL(b),
		"INTAKE_S3_ENDPOINT":   s3cfg.Endpoint,
		"INTAKE_S3_BUCKET":     s3cfg.Bucket,
		"INTAKE_S3_ACCESS_KEY": s3cfg.AccessKey,
		"INTAKE_S3_SECRET_KEY": s3cfg.SecretKey,
		"INTAKE_LOG_LEVEL":     "warn",
	})
	raw, err := objectstore.NewS3(s3cfg)
	if err != nil {
		b.Fatal(err)
	}
	pdf := benchPDF()
	const clients = 32
	var baseline, uploads float64

	b.Run("PutObject", func(b *testing.B) {
		var l latencies
		var n atomic.Int64
		b.SetParallelism(clients / max(1, runtimeProcs()))
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				t0 := time.Now()
				key := "bench/" + strconv.FormatInt(n.Add(1), 10) + ".pdf"
				if err := raw.Put(context.Background(), key, bytes.NewReader(pdf), int64(len(pdf)), "application/pdf"); err != nil {
					b.Error(err)
					return
				}
				l.add(time.Since(t0))
			}
		})
		baseline = l.report(b, time.Since(start))
	})

	b.Run("Upload", func(b *testing.B) {
		var l latencies
		var n atomic.Int64
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		b.SetParallelism(clients / max(1, runtimeProcs()))
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				var buf bytes.Buffer
				w := multipart.NewWriter(&buf)
				_ = w.WriteField("message_id", fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), n.Add(1)))
				_ = w.WriteField("subject", "PO")
				_ = w.WriteField("template", "contoso-po")
				fw, _ := w.CreateFormFile("file", "order.pdf")
				_, _ = fw.Write(pdf)
				_ = w.Close()
				req, _ := http.NewRequest(http.MethodPost, sys.URL+"/incoming", &buf)
				req.Header.Set("Content-Type", w.FormDataContentType())
				req.Header.Set("Authorization", "Bearer "+standalonetest.DevToken)
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusAccepted {
					b.Errorf("status %d", res.StatusCode)
					return
				}
				l.add(time.Since(t0))
			}
		})
		uploads = l.report(b, time.Since(start))
	})
	if baseline > 0 && uploads > 0 {
		fmt.Printf("ingest: %.0f uploads/s vs %.0f PutObject/s on the same store: %.2f× the raw object-store rate\n",
			uploads, baseline, uploads/baseline)
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
