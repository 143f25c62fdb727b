package intakectl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/client"
)

// The webhook credentials of deploy/dev/clients.yaml's client, so that
// `bin/intakectl listen` without flags receives `make run`'s deliveries.
const (
	devWebhookToken  = "dev-webhook-token"
	devSigningSecret = "whsec_ZGV2LXNpZ25pbmctc2VjcmV0LWZvci1sb2NhbC11c2U="
)

func init() {
	register("listen", "receive webhooks locally: verify, print one line per delivery, save results", runListen)
}

func runListen(ctx context.Context, args []string, env Env) int {
	fs := newFlags("listen", env)
	addr := fs.String("addr", "127.0.0.1:9099", "address to listen on (the dev client's webhook_url is http://127.0.0.1:9099/hook)")
	token := fs.String("token", devWebhookToken, "expected Authorization: Bearer token (the client's webhook_token); empty skips the check")
	secret := fs.String("secret", devSigningSecret, "Standard Webhooks signing secret (whsec_…); empty skips the signature check")
	tolerance := fs.Duration("tolerance", 5*time.Minute, "largest accepted distance of webhook-timestamp from now")
	out := fs.String("out", "", "directory to write each result to as <log_id>.xml")
	asJSON := fs.Bool("json", false, "print one JSON object per delivery")
	fs.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: intakectl listen [--addr 127.0.0.1:9099] [--token T] [--secret whsec_…] [--out DIR] [--json]")
		fmt.Fprintln(env.Stderr, "A development webhook receiver: checks the bearer token, signature and timestamp (401 and a line saying\nwhy otherwise), answers 204 and prints each delivery. Defaults match deploy/dev/clients.yaml.")
		fs.PrintDefaults()
	}
	rest, ok := parseFlags(fs, args)
	if !ok {
		return 2
	}
	if len(rest) > 0 {
		fs.Usage()
		return 2
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fail(env, "listen: %v", err)
		}
	}
	p := &listenPrinter{w: env.Stdout, json: *asJSON, out: *out, seen: map[string]bool{}}
	h, err := client.NewWebhookHandler(client.WebhookConfig{Token: *token, Secret: *secret, Tolerance: *tolerance,
		Handle: p.delivery, Refused: p.refused})
	if err != nil {
		return fail(env, "listen: %v (give --token or --secret)", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(env, "listen: %v", err)
	}
	checks := []string{}
	if *token != "" {
		checks = append(checks, "bearer token")
	}
	if *secret != "" {
		checks = append(checks, "signature", "timestamp")
	}
	fmt.Fprintf(env.Stderr, "intakectl listen: receiving webhooks on http://%s/ (checking %s); Ctrl-C stops\n",
		ln.Addr(), strings.Join(checks, ", "))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fail(env, "listen: %v", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fail(env, "listen: shutdown: %v", err)
	}
	return 0
}

// listenPrinter writes one line (or JSON object) per delivery or refusal.
type listenPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
	out  string
	seen map[string]bool // webhook-ids received, to mark repeats
}

// listenLine is the --json form of one delivery or refusal.
type listenLine struct {
	Time         string `json:"time"`
	Refused      bool   `json:"refused,omitempty"`
	Error        string `json:"error,omitempty"`
	Remote       string `json:"remote,omitempty"`
	WebhookID    string `json:"webhook_id,omitempty"`
	Repeat       bool   `json:"repeat,omitempty"`
	Status       string `json:"status,omitempty"`
	StatusReason string `json:"status_reason,omitempty"`
	LogID        string `json:"log_id,omitempty"`
	MessageID    string `json:"message_id,omitempty"`
	Template     string `json:"template,omitempty"`
	OrderID      string `json:"order_id,omitempty"`
	Items        *int   `json:"items,omitempty"`
	OrderError   string `json:"order_error,omitempty"`
	File         string `json:"file,omitempty"`
}

func (p *listenPrinter) delivery(_ context.Context, d client.Delivery) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := listenLine{Time: time.Now().UTC().Format(time.RFC3339), WebhookID: d.ID, Repeat: p.seen[d.ID],
		Status: d.Status, StatusReason: d.StatusReason, LogID: d.LogID, MessageID: d.MessageID, Template: d.Template}
	p.seen[d.ID] = true
	if d.Order != nil {
		n := len(d.Order.Items)
		l.OrderID, l.Items = d.Order.ID, &n
	}
	if d.OrderErr != nil {
		l.OrderError = d.OrderErr.Error()
	}
	if p.out != "" && d.Result != nil {
		// The log_id comes from a verified body, but it still must not
		// name a path outside the directory.
		if d.LogID != filepath.Base(d.LogID) || strings.HasPrefix(d.LogID, ".") {
			l.Error = fmt.Sprintf("log_id %q is not a file name; result not written", d.LogID)
		} else {
			f := filepath.Join(p.out, d.LogID+".xml")
			if err := os.WriteFile(f, d.Result, 0o644); err != nil {
				// Answer 500: docintake sends the delivery again, by then
				// the directory may be writable.
				p.print(l)
				return fmt.Errorf("write result: %w", err)
			}
			l.File = f
		}
	}
	p.print(l)
	return nil
}

func (p *listenPrinter) refused(r *http.Request, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ve *client.VerifyError
	msg := err.Error()
	if errors.As(err, &ve) {
		msg = ve.Reason
	}
	p.print(listenLine{Time: time.Now().UTC().Format(time.RFC3339), Refused: true, Error: msg, Remote: r.RemoteAddr,
		WebhookID: r.Header.Get("webhook-id")})
}

func (p *listenPrinter) print(l listenLine) {
	if p.json {
		b, _ := json.Marshal(l)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	if l.Refused {
		fmt.Fprintf(p.w, "%s  REFUSED  from %s webhook-id=%s: %s\n", l.Time, l.Remote, dash(l.WebhookID), l.Error)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-18s reason=%s log_id=%s message_id=%s template=%s", l.Time, l.Status, dash(l.StatusReason),
		l.LogID, dash(l.MessageID), dash(l.Template))
	if l.Items != nil {
		fmt.Fprintf(&b, " order=%s items=%d", dash(l.OrderID), *l.Items)
	}
	if l.OrderError != "" {
		fmt.Fprintf(&b, " order_error=%q", l.OrderError)
	}
	if l.File != "" {
		fmt.Fprintf(&b, " file=%s", l.File)
	}
	if l.Error != "" {
		fmt.Fprintf(&b, " error=%q", l.Error)
	}
	if l.Repeat {
		b.WriteString(" (repeat)")
	}
	fmt.Fprintln(p.w, b.String())
}
