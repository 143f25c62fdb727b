package benchharness

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ingest measures phase 1 and ingest's memory around a large upload. No
// processor runs yet, so ingest, PostgreSQL, nats-server and versitygw have
// the machine; the jobs of these uploads are purged afterwards.
func (h *harness) ingest(ctx context.Context) error {
	const size = 100 << 10
	pdf := paddedPDF(size)
	raw, err := objectstore.NewS3(h.sys.s3cfg)
	if err != nil {
		return err
	}
	if err := raw.EnsureBucket(ctx); err != nil {
		return err
	}
	d, clients := h.opts.IngestDuration, h.opts.Clients

	var put latencies
	var n atomic.Int64
	h.prog.set(func() string { return fmt.Sprintf("ingest: raw PutObject, %d clients: %d objects", clients, put.len()) })
	// Each run starts with no dirty pages: the 2 GB the PutObject run
	// writes were otherwise written back during the upload run, whose
	// servers then paid for it (iowait 0.15–0.19 against 0.02, versitygw
	// 0.1–0.3 ms more per identical put) and the difference of the two
	// runs carried that bias.
	syscall.Sync()
	c0 := h.sampleCPU()
	el, err := closedLoop(ctx, clients, d, &put, func(ctx context.Context, _ int) (time.Duration, error) {
		key := "bench/raw/" + strconv.FormatInt(n.Add(1), 10) + ".pdf"
		t0 := time.Now()
		err := raw.Put(ctx, key, bytes.NewReader(pdf), size, "application/pdf")
		return time.Since(t0), err
	})
	if err != nil {
		return fmt.Errorf("PutObject: %w", err)
	}
	putCPU := cpuUse(c0, h.sampleCPU())
	putRate := float64(put.len()) / el.Seconds()
	h.logf("raw PutObject: %.0f/s (p50 %s, p99 %s); CPU in cores: %s; %s", putRate, ms(put.quantile(0.5)), ms(put.quantile(0.99)), putCPU,
		putCPU.msPerItem(putRate))

	u := newUploader(h.sys.apiURL, h.sys.tokens, clients*2)
	var up latencies
	h.prog.set(func() string { return fmt.Sprintf("ingest: uploads, %d clients: %d accepted", clients, up.len()) })
	stopProfile := h.profiles(ctx, "profile", "ingest-max", d-time.Second, h.sys.ingest)
	syscall.Sync()
	c0 = h.sampleCPU()
	el, err = closedLoop(ctx, clients, d, &up, func(ctx context.Context, _ int) (time.Duration, error) {
		_, took, err := u.upload(ctx, ingestTenant, pdf, "order.pdf", h.corpus.template)
		return took, err
	})
	upCPU := cpuUse(c0, h.sampleCPU())
	stopProfile()
	if err != nil {
		return err
	}
	upRate := float64(up.len()) / el.Seconds()
	h.logf("uploads: %.0f/s (p50 %s, p99 %s, p999 %s); CPU in cores: %s; %s", upRate, ms(up.quantile(0.5)), ms(up.quantile(0.99)),
		ms(up.quantile(0.999)), upCPU, upCPU.msPerItem(upRate))

	// Half the maximum, offered at a fixed rate.
	half := upRate / 2
	var hl latencies
	h.prog.set(func() string { return fmt.Sprintf("ingest: %.0f uploads/s offered: %d accepted", half, hl.len()) })
	skipped, err := openLoop(ctx, half, d, 4*clients, func(ctx context.Context) error {
		_, took, err := u.upload(ctx, ingestTenant, pdf, "order.pdf", h.corpus.template)
		hl.add(took)
		return err
	})
	if err != nil {
		return err
	}
	h.logf("uploads at %.0f/s offered: p50 %s, p99 %s, p999 %s (%d not sent: too many in flight)", half,
		ms(hl.quantile(0.5)), ms(hl.quantile(0.99)), ms(hl.quantile(0.999)), skipped)
	h.rep.Ingest = IngestFigures{PutPerSec: putRate, PutP50: put.quantile(0.5), PutP99: put.quantile(0.99), PutP999: put.quantile(0.999),
		UploadPerSec: upRate, UpP50: up.quantile(0.5), UpP99: up.quantile(0.99), UpP999: up.quantile(0.999),
		HalfRate: half, HalfP50: hl.quantile(0.5), HalfP99: hl.quantile(0.99), HalfP999: hl.quantile(0.999), HalfSkipped: skipped,
		Clients: clients, Duration: d, Uploads: up.len() + hl.len(), PutCPU: putCPU, UploadCPU: upCPU}

	if err := h.bigUpload(ctx, u); err != nil {
		return err
	}
	return h.purgeIngestJobs(ctx)
}

// bigUpload reads ingest's RSS before a 24 MiB upload, resets its peak,
// uploads, and reads the peak and the RSS after it.
func (h *harness) bigUpload(ctx context.Context, u *uploader) error {
	pid := h.sys.ingest.p.PID()
	h.rep.Memory.IngestPeakBeforeBig = procStatusKiB(pid, "VmHWM")
	before := procStatusKiB(pid, "VmRSS")
	reset := resetPeakRSS(pid) == nil
	big := paddedPDF(int(h.opts.BigUpload))
	body, ctype := u.body(big, "big.pdf", h.corpus.template)
	h.prog.set(func() string { return fmt.Sprintf("memory: uploading %d MiB", h.opts.BigUpload>>20) })
	if _, err := u.post(ctx, ingestTenant, body, ctype); err != nil {
		return fmt.Errorf("%d MiB upload: %w", h.opts.BigUpload>>20, err)
	}
	m := &h.rep.Memory
	m.BigUpload, m.IngestBefore, m.IngestAfter = h.opts.BigUpload, before, procStatusKiB(pid, "VmRSS")
	if reset {
		m.IngestPeakDuringBig = procStatusKiB(pid, "VmHWM")
	}
	h.logf("ingest RSS around a %d MiB upload: before %s, peak during %s, after %s", h.opts.BigUpload>>20,
		mib(m.IngestBefore), mib(m.IngestPeakDuringBig), mib(m.IngestAfter))
	return nil
}

// purgeIngestJobs waits until ingest's relay has published every job of
// the ingest phase and drops them from the stream, so the end-to-end phase
// starts with an empty queue.
func (h *harness) purgeIngestJobs(ctx context.Context) error {
	h.prog.set(func() string { return "ingest: waiting for the outbox relay" })
	var unsent int
	if err := waitUntil(ctx, 2*time.Minute, func() bool {
		return h.sys.pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE sent_at IS NULL`).Scan(&unsent) == nil && unsent == 0
	}); err != nil {
		return fmt.Errorf("outbox not drained (%d unsent): %w", unsent, err)
	}
	nc, err := nats.Connect(h.sys.natsURL)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	st, err := js.Stream(ctx, queue.DefaultStream)
	if err != nil {
		return err
	}
	return st.Purge(ctx, jetstream.WithPurgeSubject(jobs.ProcessSubject(jobs.DefaultSubjectPrefix, ingestTenant)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
