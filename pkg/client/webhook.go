package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Delivery statuses (the status field of a webhook call).
const (
	StatusSuccess          = "success"
	StatusRejected         = "rejected"
	StatusIgnored          = "ignored"
	StatusFailed           = "failed"
	StatusDeferredForRetry = "deferred_for_retry"
)

// Delivery is one verified webhook call of docintake.
type Delivery struct {
	// ID is the webhook-id header: the same on every retry of one
	// delivery. Store the ids you have processed and skip repeats.
	ID string
	// Timestamp is when this attempt was signed (webhook-timestamp).
	Timestamp time.Time

	Template  string
	MessageID string
	LogID     string
	// Status is one of the Status… constants; StatusReason explains
	// rejected, deferred_for_retry and (when known) failed deliveries
	// (for example "not_an_order", "mapping_not_resolved"), else "".
	Status       string
	StatusReason string
	// Result is the openTRANS XML of a success, nil otherwise.
	Result []byte
	// Order is Result parsed, nil without a result. OrderErr says why a
	// result could not be parsed (the call is still handed over: the XML is
	// in Result and docintake would only send the same bytes again).
	Order    *Order
	OrderErr error
}

// WebhookConfig configures NewWebhookHandler. Token and Secret are the
// values configured for your client in docintake (webhook_token,
// signing_secret); at least one must be set.
type WebhookConfig struct {
	// Token is the expected Authorization: Bearer token; empty skips the
	// check (then Secret must be set).
	Token string
	// Secret is the Standard Webhooks signing secret ("whsec_…"); empty
	// skips the signature check (then Token must be set).
	Secret string
	// Tolerance is how far webhook-timestamp may be from now; 0 means 5
	// minutes (the Standard Webhooks default). Older or future timestamps
	// are refused to stop replays.
	Tolerance time.Duration
	// MaxBodyBytes bounds the body; 0 means 64 MiB.
	MaxBodyBytes int64
	// Handle processes a verified delivery. Returning nil answers 204; an
	// error answers 500 and docintake sends the same delivery (same ID)
	// again later. Handle it quickly: docintake waits at most
	// INTAKE_WEBHOOK_TIMEOUT (15 s by default) for the answer.
	Handle func(ctx context.Context, d Delivery) error
	// Refused, when set, is told about every call answered 401 or 400,
	// with the reason (a *VerifyError for failed checks).
	Refused func(r *http.Request, err error)
	// Now returns the current time; nil uses time.Now (tests pin it).
	Now func() time.Time
}

// VerifyError says why a webhook call was refused (answered 401).
type VerifyError struct{ Reason string }

func (e *VerifyError) Error() string { return "webhook refused: " + e.Reason }

// NewWebhookHandler returns an http.Handler for docintake's webhook calls:
// it accepts only POST, checks the bearer token, the Standard Webhooks
// signature over the raw body and the timestamp's tolerance (401
// otherwise), decodes the body and the openTRANS order and calls
// cfg.Handle.
func NewWebhookHandler(cfg WebhookConfig) (http.Handler, error) {
	if cfg.Token == "" && cfg.Secret == "" {
		return nil, errors.New("webhook handler: set Token, Secret or both; an unauthenticated endpoint accepts forged results")
	}
	if cfg.Handle == nil {
		return nil, errors.New("webhook handler: Handle is nil")
	}
	var key []byte
	if cfg.Secret != "" {
		k, err := decodeSecret(cfg.Secret)
		if err != nil {
			return nil, fmt.Errorf("webhook handler: %w", err)
		}
		key = k
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = 5 * time.Minute
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 64 << 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &webhookHandler{cfg: cfg, key: key}, nil
}

type webhookHandler struct {
	cfg WebhookConfig
	key []byte
}

func (h *webhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	refuse := func(status int, err error) {
		if h.cfg.Refused != nil {
			h.cfg.Refused(r, err)
		}
		http.Error(w, err.Error(), status)
	}
	if h.cfg.Token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			refuse(http.StatusUnauthorized, &VerifyError{"no Authorization: Bearer header"})
			return
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(h.cfg.Token)) != 1 {
			refuse(http.StatusUnauthorized, &VerifyError{"wrong bearer token"})
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		refuse(http.StatusBadRequest, fmt.Errorf("read body: %w", err))
		return
	}
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	at, err := checkTimestamp(ts, h.cfg.Now(), h.cfg.Tolerance)
	if err == nil && h.key != nil {
		err = verifySignature(h.key, id, ts, body, r.Header.Get("webhook-signature"))
	}
	if err != nil {
		refuse(http.StatusUnauthorized, err)
		return
	}
	d, err := decodeDelivery(body)
	if err != nil {
		refuse(http.StatusBadRequest, err)
		return
	}
	d.ID, d.Timestamp = id, at
	if err := h.cfg.Handle(r.Context(), d); err != nil {
		http.Error(w, "handler failed; send again later", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// VerifySignature checks a Standard Webhooks signature for receivers that
// do not use NewWebhookHandler: secret is "whsec_…", id, timestamp and
// signatureHeader are the webhook-id, webhook-timestamp and
// webhook-signature headers, body the raw request body. It also refuses a
// timestamp further than tolerance from now. A nil result means valid; an
// error is a *VerifyError saying why not.
func VerifySignature(secret, id, timestamp, signatureHeader string, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := decodeSecret(secret)
	if err != nil {
		return err
	}
	if _, err := checkTimestamp(timestamp, now, tolerance); err != nil {
		return err
	}
	return verifySignature(key, id, timestamp, body, signatureHeader)
}

func decodeSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, errors.New("signing secret is not base64 (optionally prefixed whsec_)")
	}
	return key, nil
}

func checkTimestamp(ts string, now time.Time, tolerance time.Duration) (time.Time, error) {
	if ts == "" {
		return time.Time{}, &VerifyError{"no webhook-timestamp header"}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return time.Time{}, &VerifyError{fmt.Sprintf("webhook-timestamp %q is not unix seconds", ts)}
	}
	at := time.Unix(sec, 0)
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return time.Time{}, &VerifyError{fmt.Sprintf("webhook-timestamp %s is %s from now (tolerance %s): a replay or a wrong clock",
			at.UTC().Format(time.RFC3339), d.Round(time.Second), tolerance)}
	}
	return at, nil
}

// verifySignature accepts the call when any of the space-separated "v1,…"
// signatures (several during a secret rotation) matches.
func verifySignature(key []byte, id, ts string, body []byte, header string) error {
	if id == "" {
		return &VerifyError{"no webhook-id header"}
	}
	if header == "" {
		return &VerifyError{"no webhook-signature header (is a signing secret configured for this client?)"}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(header) {
		v, sig, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return &VerifyError{"no webhook-signature matches (wrong secret, or the body was changed)"}
}

// decodeDelivery reads the webhook body and parses a result.
func decodeDelivery(body []byte) (Delivery, error) {
	var b struct {
		Template     string  `json:"template"`
		MessageID    string  `json:"message_id"`
		LogID        string  `json:"log_id"`
		Result       *string `json:"result"`
		Status       string  `json:"status"`
		StatusReason *string `json:"status_reason"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return Delivery{}, fmt.Errorf("decode webhook body: %w", err)
	}
	if b.LogID == "" || b.Status == "" {
		return Delivery{}, errors.New("decode webhook body: log_id or status missing")
	}
	d := Delivery{Template: b.Template, MessageID: b.MessageID, LogID: b.LogID, Status: b.Status}
	if b.StatusReason != nil {
		d.StatusReason = *b.StatusReason
	}
	if b.Result != nil {
		d.Result = []byte(*b.Result)
		d.Order, d.OrderErr = ParseOrder(d.Result)
	}
	return d, nil
}
