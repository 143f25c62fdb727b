package benchharness

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// receiver is the clients' webhook endpoint: it checks the bearer token,
// answers 204 at once and records when each document's first webhook
// arrived, so end-to-end time is measured where a client would see it.
type receiver struct {
	token string
	url   string
	srv   *http.Server

	received atomic.Int64 // distinct documents
	mu       sync.Mutex
	arrived  map[string]time.Time // log_id → first webhook
	statuses map[string]int
}

func startReceiver(token string) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{token: token, url: "http://" + ln.Addr().String(), arrived: map[string]time.Time{}, statuses: map[string]int{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) close() { _ = r.srv.Close() }

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	if err != nil || req.Header.Get("Authorization") != "Bearer "+r.token {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	var msg struct {
		LogID  string `json:"log_id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.LogID == "" {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if _, seen := r.arrived[msg.LogID]; !seen {
		r.arrived[msg.LogID] = now
		r.statuses[msg.Status]++
		r.received.Add(1)
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// at returns when the document's first webhook arrived.
func (r *receiver) at(logID string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.arrived[logID]
	return t, ok
}

// statusCounts returns how many documents' first webhook carried each status.
func (r *receiver) statusCounts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.statuses))
	for k, v := range r.statuses {
		out[k] = v
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
