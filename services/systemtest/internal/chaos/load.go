package chaos

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
)

// Kinds of uploaded documents, each with its expected end.
const (
	kindOrder     = "order"     // Contoso purchase order: finished_success
	kindInvoice   = "invoice"   // not an order: finished_rejected
	kindMalformed = "malformed" // hostile PDF: dlq or finished_rejected (or 415 when not %PDF-)
)

type sample struct {
	kind, name string
	data       []byte
}

// corpus returns the documents to upload: the shared corpus when it is
// beside the repository (Contoso orders, invoices, malformed files), else
// generated PDFs of the same three kinds.
func corpus(repo string) (samples []sample, fromShared bool, err error) {
	shared := filepath.Join(repo, "..", "shared", "corpus")
	if _, err := os.Stat(shared); err == nil {
		add := func(kind, dir, prefix string) error {
			entries, err := os.ReadDir(filepath.Join(shared, dir))
			if err != nil {
				return err
			}
			for _, e := range entries {
				if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) || !strings.HasSuffix(e.Name(), ".pdf") {
					continue
				}
				b, err := os.ReadFile(filepath.Join(shared, dir, e.Name()))
				if err != nil {
					return err
				}
				samples = append(samples, sample{kind: kind, name: e.Name(), data: b})
			}
			return nil
		}
		for _, a := range [][3]string{{kindOrder, "orders", "contoso-po-"}, {kindInvoice, "other", ""}, {kindMalformed, "malformed", ""}} {
			if err := add(a[0], a[1], a[2]); err != nil {
				return nil, false, fmt.Errorf("corpus %s: %w", a[1], err)
			}
		}
		return samples, true, nil
	}
	// Generated stand-ins: the order does not match the Contoso layout
	// exactly, so it may end rejected; the checks do not depend on it.
	order := pdftexttest.PDF([]string{"Contoso Electronics", "PURCHASE ORDER", "PO # 4711", "DATE 11/21/2026"})
	invoice := pdftexttest.PDF([]string{"ACME GmbH", "INVOICE", "Rechnung 2026-11"})
	truncated := order[:len(order)/2]
	return []sample{
		{kindOrder, "generated-order.pdf", order},
		{kindInvoice, "generated-invoice.pdf", invoice},
		{kindMalformed, "generated-truncated.pdf", truncated},
		{kindMalformed, "generated-garbage.pdf", append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{0xff, 0x00, 0x7f}, 3000)...)},
	}, false, nil
}

// pick spreads n uploads over the samples: 80 % orders, 14 % invoices,
// 6 % malformed, round-robin within a kind.
func pick(samples []sample, n int) []sample {
	byKind := map[string][]sample{}
	for _, s := range samples {
		byKind[s.kind] = append(byKind[s.kind], s)
	}
	out := make([]sample, n)
	counts := map[string]int{}
	for i := range out {
		kind := kindOrder
		switch r := i % 50; {
		case r < 7:
			kind = kindInvoice
		case r < 10:
			kind = kindMalformed
		}
		if len(byKind[kind]) == 0 {
			kind = kindOrder
		}
		list := byKind[kind]
		out[i] = list[counts[kind]%len(list)]
		counts[kind]++
	}
	return out
}

// upload is one document a client sent, and everything it heard back.
type upload struct {
	sample
	tenant    string
	messageID string
	json      bool

	attempts int
	status   int      // final status (0: gave up)
	logIDs   []string // log_id of every 202
	lastErr  string
}

// uploader sends uploads like a careful client: a connection error or a
// 5xx is retried with the same message_id until a definite answer comes.
type uploader struct {
	url     string
	tenants map[string]tenant
	client  *http.Client
	giveUp  time.Duration
	done    atomic.Int64

	mu      sync.Mutex
	retries map[string]int // why requests were retried
}

func (u *uploader) run(ctx context.Context, ups []*upload, workers int) {
	work := make(chan *upload)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for up := range work {
				u.send(ctx, up)
				u.done.Add(1)
			}
		}()
	}
	for _, up := range ups {
		select {
		case work <- up:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
}

func (u *uploader) send(ctx context.Context, up *upload) {
	deadline := time.Now().Add(u.giveUp)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		up.attempts++
		status, logID, err := u.once(ctx, up)
		switch {
		case err != nil:
			up.lastErr = err.Error()
			u.noteRetry("connection error")
		case status >= 500:
			up.lastErr = fmt.Sprintf("status %d", status)
			u.noteRetry(fmt.Sprintf("status %d", status))
		default:
			up.status = status
			if status == http.StatusAccepted {
				up.logIDs = append(up.logIDs, logID)
			}
			return
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (u *uploader) noteRetry(why string) {
	u.mu.Lock()
	u.retries[why]++
	u.mu.Unlock()
}

func (u *uploader) once(ctx context.Context, up *upload) (int, string, error) {
	var body bytes.Buffer
	var ctype, path string
	if up.json {
		path, ctype = "/incoming-json", "application/json"
		_ = json.NewEncoder(&body).Encode(map[string]string{"file_base64": base64.StdEncoding.EncodeToString(up.data),
			"filename": up.name, "message_id": up.messageID, "template": "contoso-po", "subject": "chaos " + up.kind})
	} else {
		path = "/incoming"
		w := multipart.NewWriter(&body)
		_ = w.WriteField("message_id", up.messageID)
		_ = w.WriteField("subject", "chaos "+up.kind)
		_ = w.WriteField("party_id", "CONTOSO")
		fw, _ := w.CreateFormFile("file", up.name)
		_, _ = fw.Write(up.data)
		_ = w.Close()
		ctype = w.FormDataContentType()
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, u.url+path, &body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+u.tenants[up.tenant].token)
	res, err := u.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return 0, "", fmt.Errorf("read answer: %w", err)
	}
	if res.StatusCode != http.StatusAccepted {
		return res.StatusCode, "", nil
	}
	var ack struct {
		LogID string `json:"log_id"`
	}
	if err := json.Unmarshal(raw, &ack); err != nil || ack.LogID == "" {
		return 0, "", errors.New("202 without log_id: " + string(raw))
	}
	return res.StatusCode, ack.LogID, nil
}

func (u *uploader) retryCounts() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	keys := make([]string, 0, len(u.retries))
	for k := range u.retries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, u.retries[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
