package benchharness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// uploader posts PDFs to ingest the way a client does (multipart).
type uploader struct {
	url    string
	tokens map[string]string
	client *http.Client
	seq    atomic.Int64
	run    string // message_id prefix, unique per run
}

func newUploader(url string, tokens map[string]string, conns int) *uploader {
	return &uploader{url: url, tokens: tokens, run: randomHex(4),
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}}
}

// body builds one request body; it is built before the clock starts, like a
// client that has the file at hand.
func (u *uploader) body(pdf []byte, name, template string) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	buf.Grow(len(pdf) + 1024)
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("message_id", fmt.Sprintf("bench-%s-%d", u.run, u.seq.Add(1)))
	_ = w.WriteField("subject", "PO "+name)
	_ = w.WriteField("template", template)
	fw, _ := w.CreateFormFile("file", name)
	_, _ = fw.Write(pdf)
	_ = w.Close()
	return &buf, w.FormDataContentType()
}

// post sends a prepared body and returns the log_id of the 202.
func (u *uploader) post(ctx context.Context, tenant string, body io.Reader, ctype string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url+"/incoming", body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+u.tokens[tenant])
	res, err := u.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("upload: status %d: %s", res.StatusCode, bytes.TrimSpace(raw))
	}
	var ack struct {
		LogID string `json:"log_id"`
	}
	if err := json.Unmarshal(raw, &ack); err != nil || ack.LogID == "" {
		return "", fmt.Errorf("upload: 202 without log_id: %s", raw)
	}
	return ack.LogID, nil
}

// upload sends pdf and measures the time to the 202.
func (u *uploader) upload(ctx context.Context, tenant string, pdf []byte, name, template string) (string, time.Duration, error) {
	body, ctype := u.body(pdf, name, template)
	t0 := time.Now()
	id, err := u.post(ctx, tenant, body, ctype)
	return id, time.Since(t0), err
}

// latencies collects durations from concurrent goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) len() int { l.mu.Lock(); defer l.mu.Unlock(); return len(l.d) }

// quantile returns the q-quantile (nearest rank) of the durations.
func (l *latencies) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return quantile(l.d, q)
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

// closedLoop runs workers that call op back to back until d has passed;
// each call's duration goes into l. The first error stops the loop.
func closedLoop(ctx context.Context, workers int, d time.Duration, l *latencies, op func(ctx context.Context, worker int) (time.Duration, error)) (time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline := time.Now().Add(d)
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				took, err := op(ctx, w)
				if err != nil {
					if ctx.Err() == nil {
						once.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				l.add(took)
			}
		})
	}
	wg.Wait()
	return time.Since(start), firstErr
}

// openLoop starts op at a fixed rate for d, whatever the answers' speed (so
// slow answers cannot slow the offered load down), with at most maxInFlight
// calls outstanding. It returns how many calls it could not start because
// maxInFlight was reached.
func openLoop(ctx context.Context, rate float64, d time.Duration, maxInFlight int, op func(ctx context.Context) error) (skipped int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interval := time.Duration(float64(time.Second) / rate)
	sem := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	start := time.Now()
	for i := 0; ; i++ {
		next := start.Add(time.Duration(i) * interval)
		if next.Sub(start) >= d {
			break
		}
		if wait := time.Until(next); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case sem <- struct{}{}:
		default:
			skipped++
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := op(ctx); err != nil && ctx.Err() == nil {
				once.Do(func() { firstErr = err; cancel() })
			}
		})
	}
	wg.Wait()
	return skipped, firstErr
}
