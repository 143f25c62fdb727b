package benchharness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// backlog is how many documents the maximum-throughput runs keep between
// upload and webhook: enough to keep every worker busy, few enough to
// drain in seconds.
const backlog = 128

// endToEnd measures phase 2: the maximum with one processor, the latency at
// half of it, then the maximum with two processors.
func (h *harness) endToEnd(ctx context.Context) error {
	h.logf("starting dispatcher and processor-1")
	if err := h.sys.startDispatcher(ctx); err != nil {
		return err
	}
	if err := h.sys.addProcessor(ctx); err != nil {
		return err
	}
	u := newUploader(h.sys.apiURL, h.sys.tokens, 64)
	// Warm-up: connections, caches, the first pdftotext runs.
	if _, err := h.saturate(ctx, u, 3*time.Second, "warm-up"); err != nil {
		return err
	}
	stopProfile := h.profiles(ctx, "profile", "e2e-1proc", h.opts.E2EDuration-time.Second, h.sys.services()...)
	one, err := h.saturate(ctx, u, h.opts.E2EDuration, "1 processor")
	stopProfile()
	if err != nil {
		return err
	}
	h.rep.E2E.One = one
	if err := h.fixedLoad(ctx, u, one.PerSec/2); err != nil {
		return err
	}
	h.logf("starting processor-2")
	if err := h.sys.addProcessor(ctx); err != nil {
		return err
	}
	two, err := h.saturate(ctx, u, h.opts.E2EDuration, "2 processors")
	if err != nil {
		return err
	}
	h.rep.E2E.Two = two
	h.rep.E2E.Statuses = h.sys.recv.statusCounts()
	return nil
}

// saturate uploads orders for d, keeping backlog documents between upload
// and webhook, and returns the webhook rate over the last three quarters of
// d (the first quarter fills the pipeline). It then waits for the backlog
// to drain.
func (h *harness) saturate(ctx context.Context, u *uploader, d time.Duration, label string) (Throughput, error) {
	recv := h.sys.recv
	base := recv.received.Load()
	var uploaded atomic.Int64
	delivered := func() int64 { return recv.received.Load() - base }
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	stop := start.Add(d)
	h.prog.set(func() string {
		el := time.Since(start).Seconds()
		return fmt.Sprintf("end to end, %s: %d uploaded, %d delivered, %.1f/s", label, uploaded.Load(), delivered(), float64(delivered())/el)
	})
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	var seq atomic.Int64
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(stop) && ctx.Err() == nil {
				if uploaded.Load()-delivered() >= backlog {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				i := int(seq.Add(1))
				o := h.corpus.orders[i%len(h.corpus.orders)]
				if _, _, err := u.upload(ctx, e2eTenants[i%len(e2eTenants)], o.data, o.name, h.corpus.template); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				uploaded.Add(1)
			}
		})
	}
	// Sample the delivered count after the first quarter and at the end.
	var from, to int64
	var fromT, toT time.Time
	select {
	case <-ctx.Done():
	case <-time.After(d / 4):
	}
	from, fromT = delivered(), time.Now()
	c0 := h.sampleCPU()
	wg.Wait()
	to, toT = delivered(), time.Now()
	use := cpuUse(c0, h.sampleCPU())
	if firstErr != nil {
		return Throughput{}, firstErr
	}
	if err := waitUntil(ctx, 2*time.Minute, func() bool { return delivered() >= uploaded.Load() }); err != nil {
		return Throughput{}, fmt.Errorf("%s: %d of %d documents delivered: %w", label, delivered(), uploaded.Load(), err)
	}
	t := Throughput{Uploaded: uploaded.Load(), PerSec: float64(to-from) / toT.Sub(fromT).Seconds(), Window: toT.Sub(fromT), CPU: use}
	h.logf("end to end, %s: %.1f documents/s (%d documents, steady window %s); CPU in cores: %s", label, t.PerSec, t.Uploaded,
		t.Window.Round(time.Millisecond), use)
	return t, nil
}

// fixedLoad offers rate uploads/s for LatencyDuration and measures each
// document's time from upload to finished_success (PostgreSQL's clock) and
// to its webhook (the harness's clock).
func (h *harness) fixedLoad(ctx context.Context, u *uploader, rate float64) error {
	type sent struct {
		logID string
		at    time.Time
	}
	var mu sync.Mutex
	var docs []sent
	var seq atomic.Int64
	label := fmt.Sprintf("%.1f documents/s offered", rate)
	h.prog.set(func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprintf("end to end, %s: %d uploaded", label, len(docs))
	})
	base := h.sys.recv.received.Load()
	skipped, err := openLoop(ctx, rate, h.opts.LatencyDuration, 256, func(ctx context.Context) error {
		i := int(seq.Add(1))
		o := h.corpus.orders[i%len(h.corpus.orders)]
		t0 := time.Now()
		body, ctype := u.body(o.data, o.name, h.corpus.template)
		id, err := u.post(ctx, e2eTenants[i%len(e2eTenants)], body, ctype)
		if err != nil {
			return err
		}
		mu.Lock()
		docs = append(docs, sent{id, t0})
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	if err := waitUntil(ctx, 2*time.Minute, func() bool { return h.sys.recv.received.Load()-base >= int64(len(docs)) }); err != nil {
		return fmt.Errorf("fixed load: documents not delivered: %w", err)
	}
	ids := make([]string, len(docs))
	for i, s := range docs {
		ids[i] = s.logID
	}
	// The dispatcher records finished_* after the webhook call returns.
	var finished int
	_ = waitUntil(ctx, 30*time.Second, func() bool {
		return h.sys.pool.QueryRow(ctx, `SELECT count(*) FROM documents WHERE log_id = ANY($1) AND state LIKE 'finished\_%'`, ids).
			Scan(&finished) == nil && finished == len(ids)
	})
	var hook []time.Duration
	for _, s := range docs {
		if at, ok := h.sys.recv.at(s.logID); ok {
			hook = append(hook, at.Sub(s.at))
		}
	}
	rows, err := h.sys.pool.Query(ctx, `SELECT extract(epoch FROM e.at - d.created_at)::float8 FROM documents d
		JOIN document_events e ON e.document_id = d.id AND e.to_state = 'finished_success'
		WHERE d.log_id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	var db []time.Duration
	for rows.Next() {
		var sec float64
		if err := rows.Scan(&sec); err != nil {
			return err
		}
		db = append(db, time.Duration(sec*float64(time.Second)))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	f := Latency{Offered: rate, Documents: len(docs), Succeeded: len(db), Skipped: skipped,
		DBP50: quantile(db, 0.5), DBP99: quantile(db, 0.99), HookP50: quantile(hook, 0.5), HookP99: quantile(hook, 0.99)}
	h.rep.E2E.Latency = f
	h.logf("end to end at %s: upload→finished_success p50 %s p99 %s; upload→webhook p50 %s p99 %s (%d of %d finished_success)",
		label, ms(f.DBP50), ms(f.DBP99), ms(f.HookP50), ms(f.HookP99), f.Succeeded, f.Documents)
	return nil
}
