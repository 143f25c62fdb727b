package chaos

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// delivery is one webhook call the receiver answered with 2xx.
type delivery struct {
	WebhookID string
	Tenant    string // from the URL path the dispatcher posted to
	LogID     string
	Status    string
	At        time.Time
}

// receiver is the clients' webhook endpoint: it verifies each call the way
// docs/webhooks.md tells clients to (bearer token, Standard Webhooks
// signature over the raw body) and records every copy it accepts.
type receiver struct {
	tenants  map[string]tenant
	failRate float64 // share of calls answered 503, to exercise retries

	mu        sync.Mutex
	accepted  []delivery
	refused   int // answered 503 on purpose
	forged    int // wrong token, bad signature or unparsable body
	lastCall  time.Time
	forgeries []string
	srv       *http.Server
	url       string
}

func startReceiver(tenants map[string]tenant, failRate float64) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{tenants: tenants, failRate: failRate, url: "http://" + ln.Addr().String()}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) close() { _ = r.srv.Close() }

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	tenantID := strings.TrimPrefix(req.URL.Path, "/hook/")
	ten, ok := r.tenants[tenantID]
	r.mu.Lock()
	r.lastCall = time.Now()
	r.mu.Unlock()
	if err != nil || !ok || req.Header.Get("Authorization") != "Bearer "+ten.webhookToken || !validSignature(ten.signingKey, req, body) {
		r.forgery(req.URL.Path + ": bad token, signature or body")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	var msg struct {
		LogID  string `json:"log_id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.LogID == "" {
		r.forgery(req.URL.Path + ": unparsable body")
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	if r.failRate > 0 && rand.Float64() < r.failRate {
		r.mu.Lock()
		r.refused++
		r.mu.Unlock()
		http.Error(w, "try later", http.StatusServiceUnavailable)
		return
	}
	r.mu.Lock()
	r.accepted = append(r.accepted, delivery{WebhookID: req.Header.Get("webhook-id"), Tenant: tenantID,
		LogID: msg.LogID, Status: msg.Status, At: time.Now()})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) forgery(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forged++
	if len(r.forgeries) < 5 {
		r.forgeries = append(r.forgeries, what)
	}
}

// snapshot returns a copy of the accepted deliveries and the time of the
// last call of any kind.
func (r *receiver) snapshot() ([]delivery, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.accepted...), r.lastCall
}

// validSignature checks webhook-signature: v1,base64(HMAC-SHA256(key,
// id.timestamp.body)), any of the space-separated signatures.
func validSignature(key []byte, req *http.Request, body []byte) bool {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(req.Header.Get("webhook-id") + "." + req.Header.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(req.Header.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}
