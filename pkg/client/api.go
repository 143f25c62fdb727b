package client

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
	"net/textproto"
	"net/url"
	"sort"
	"time"
)

// UploadRequest is one PDF to upload.
type UploadRequest struct {
	// File is the PDF. Upload streams it; when it is also an io.Seeker (an
	// *os.File, a *bytes.Reader) a retried attempt rewinds it, otherwise
	// the call is not retried.
	File io.Reader
	// Filename is the file's name as the service records it ("order.pdf"
	// when empty).
	Filename string
	// MessageID identifies the upload (for example the e-mail's
	// Message-ID plus the attachment's index). Re-sending the same file with
	// the same MessageID returns the original log_id instead of creating a
	// second document; another file under a used MessageID is refused with
	// CodeDuplicateMessageID.
	MessageID string
	// Subject is the subject of the e-mail the PDF came with.
	Subject string
	// Template names the template; PartyID lets the service pick it by the
	// buyer's party id. Exactly one of them (UploadJSON: Template only), or
	// neither with Upload for a client whose uploads without them are
	// routed (route_unaddressed; otherwise the service answers 422).
	// TemplateGeneric reads an order without a template.
	Template string
	PartyID  string
	// ResultMode is optional; ResultModeNoItems omits the order items.
	ResultMode string
}

// ResultModeNoItems asks for a result without order items.
const ResultModeNoItems = "no_items"

// TemplateGeneric is the built-in template every client may name: the
// generic reader reads the order without a template and delivers only a
// reading that proves itself (its arithmetic closes), else a rejection
// with a reason.
const TemplateGeneric = "generic"

// Ack is the answer to an upload: the document's log_id and a status text.
type Ack struct {
	LogID  string `json:"log_id"`
	Status string `json:"status"`
}

// State is a document's processing state as the API reports it.
type State string

// The document states (pkg/document/STATES.md of docintake).
const (
	StateReceived            State = "received"
	StateDeferredForRetry    State = "deferred_for_retry"
	StateDLQ                 State = "dlq"
	StateProcessedIgnored    State = "processed_ignored"
	StateProcessedRejected   State = "processed_rejected"
	StateProcessedSuccess    State = "processed_success"
	StateSentRejected        State = "sent_rejected"
	StateSentSuccess         State = "sent_success"
	StateFinishedSuccess     State = "finished_success"
	StateFinishedRejected    State = "finished_rejected"
	StateFinishedIgnored     State = "finished_ignored"
	StateFinishedWithFailure State = "finished_with_failure"
	StateUnknown             State = "unknown"
)

// States lists every state in the order of the API description.
var States = []State{StateReceived, StateDeferredForRetry, StateDLQ, StateProcessedIgnored, StateProcessedRejected,
	StateProcessedSuccess, StateSentRejected, StateSentSuccess, StateFinishedSuccess, StateFinishedRejected,
	StateFinishedIgnored, StateFinishedWithFailure, StateUnknown}

// Outcome is what processing decided for a document, independent of
// whether the webhook has been delivered yet: "success", "rejected",
// "ignored", "failed" (dlq, or the delivery gave up), "deferred" (a mapping
// is missing; the service retries for hours) or "" while it is still
// being processed.
func (s State) Outcome() string {
	switch s {
	case StateProcessedSuccess, StateSentSuccess, StateFinishedSuccess:
		return "success"
	case StateProcessedRejected, StateSentRejected, StateFinishedRejected:
		return "rejected"
	case StateProcessedIgnored, StateFinishedIgnored:
		return "ignored"
	case StateDLQ, StateFinishedWithFailure:
		return "failed"
	case StateDeferredForRetry:
		return "deferred"
	}
	return ""
}

// Document is the answer of Client.Document.
type Document struct {
	ID        string `json:"id"`
	Filename  string `json:"filename"`
	MessageID string `json:"message_id"`
	// DocumentDate is the order's date (YYYY-MM-DD), nil until extracted.
	DocumentDate *string `json:"document_date"`
	// SourcePath, ResultJSONPath and ResultPath locate the archived PDF and
	// the results in the service's object store, nil while absent.
	SourcePath     *string `json:"source_path"`
	ResultJSONPath *string `json:"result_json_path"`
	ResultPath     *string `json:"result_path"`
	State          State   `json:"document_state"`
	// StatusReason says why a document was rejected or failed (the
	// webhook's status_reason, e.g. "cannot_parse_items"); "" when there is
	// none. docintake's extension of the contract's resource.
	StatusReason string `json:"status_reason,omitempty"`
	// Template is the template the document is read with: the one named at
	// upload, the party_id's, or the one the routing chain chose for an
	// upload without either; "" while none is chosen. docintake's
	// extension too.
	Template string `json:"template,omitempty"`
	// Flags are what the order's checks found (docs/orders.md): a price
	// outside the client's price list, a delivery date before the order
	// date or already past; empty when none. docintake's extension too.
	Flags []Flag `json:"flags,omitempty"`
}

// Flag is one finding about a document's order. Nothing is corrected: the
// order carries the printed value, the flag the expected one.
//
// The same fields as pkg/resultjson.Flag, written again on purpose: this
// module depends only on the standard library (doc.go), so it cannot import
// the pkg module; the OpenAPI Flag schema is the contract both follow.
type Flag struct {
	// Kind is price, price_no_entry, delivery_date_before_order or
	// delivery_date_past.
	Kind string `json:"kind"`
	// Line is the order line (1 for the first item), 0 for the order.
	Line     int    `json:"line"`
	Position string `json:"position,omitempty"`
	Article  string `json:"article,omitempty"`
	Expected string `json:"expected"`
	Printed  string `json:"printed"`
	Message  string `json:"message"`
}

// Upload posts the PDF as multipart/form-data (POST /incoming), streaming
// the file instead of holding it in memory, and returns the acknowledgement
// (202). Errors of the API are *Error.
func (c *Client) Upload(ctx context.Context, r UploadRequest) (Ack, error) {
	if err := checkUpload(r, true); err != nil {
		return Ack{}, err
	}
	fields := [][2]string{{"message_id", r.MessageID}, {"subject", r.Subject}}
	for _, f := range [][2]string{{"template", r.Template}, {"party_id", r.PartyID}, {"result_mode", r.ResultMode}} {
		if f[1] != "" {
			fields = append(fields, f)
		}
	}
	var (
		ack  Ack
		prev *io.PipeReader
		done chan struct{}
	)
	// finish stops the previous attempt's writer before the file is
	// rewound or the call returns: the transport may close the request
	// body asynchronously, and the writer must not read the file after that.
	finish := func() {
		if prev != nil {
			prev.Close()
			<-done
		}
	}
	body := func(attempt int) (io.ReadCloser, string, error) {
		finish()
		if err := rewind(r.File, attempt); err != nil {
			return nil, "", err
		}
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		prev, done = pr, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			pw.CloseWithError(writeMultipart(mw, fields, filename(r.Filename), r.File))
		}(done)
		return pr, mw.FormDataContentType(), nil
	}
	err := c.do(ctx, request{method: http.MethodPost, path: "/incoming", body: body}, http.StatusAccepted, &ack)
	finish()
	return ack, err
}

func writeMultipart(mw *multipart.Writer, fields [][2]string, name string, file io.Reader) error {
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", multipart.FileContentDisposition("file", name))
	h.Set("Content-Type", "application/pdf")
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(part, file); err != nil {
		return &bodyError{fmt.Errorf("read file: %w", err)}
	}
	return mw.Close()
}

// UploadJSON posts the PDF base64-encoded in a JSON body (POST
// /incoming-json). This variant requires Template (it has no party_id) and
// holds the file in memory; prefer Upload.
func (c *Client) UploadJSON(ctx context.Context, r UploadRequest) (Ack, error) {
	if err := checkUpload(r, false); err != nil {
		return Ack{}, err
	}
	pdf, err := io.ReadAll(r.File)
	if err != nil {
		return Ack{}, fmt.Errorf("docintake upload: read file: %w", err)
	}
	var mode *string
	if r.ResultMode != "" {
		mode = &r.ResultMode
	}
	name := filename(r.Filename)
	raw, err := json.Marshal(jsonUpload{FileBase64: base64.StdEncoding.EncodeToString(pdf), Filename: &name,
		MessageID: r.MessageID, Template: r.Template, Subject: r.Subject, ResultMode: mode})
	if err != nil {
		return Ack{}, fmt.Errorf("docintake upload: %w", err)
	}
	var ack Ack
	body := func(int) (io.ReadCloser, string, error) {
		return io.NopCloser(bytes.NewReader(raw)), "application/json", nil
	}
	err = c.do(ctx, request{method: http.MethodPost, path: "/incoming-json", body: body}, http.StatusAccepted, &ack)
	return ack, err
}

// jsonUpload is the body of POST /incoming-json.
type jsonUpload struct {
	FileBase64 string  `json:"file_base64"`
	Filename   *string `json:"filename"`
	MessageID  string  `json:"message_id"`
	Template   string  `json:"template"`
	Subject    string  `json:"subject"`
	ResultMode *string `json:"result_mode"`
}

// Document returns the details of the document with this log_id (GET
// /documents/{log_id}); an unknown log_id (or another client's) is an
// *Error with CodeDocumentNotFound.
func (c *Client) Document(ctx context.Context, logID string) (Document, error) {
	if logID == "" {
		return Document{}, errors.New("docintake document: empty log_id")
	}
	var d Document
	err := c.do(ctx, request{method: http.MethodGet, path: "/documents/" + url.PathEscape(logID)}, http.StatusOK, &d)
	return d, err
}

func checkUpload(r UploadRequest, multipart bool) error {
	switch {
	case r.File == nil:
		return errors.New("docintake upload: no file")
	case r.MessageID == "":
		return errors.New("docintake upload: empty message_id")
	case !multipart && r.Template == "":
		return errors.New("docintake upload: the JSON variant needs a template (it has no party_id)")
	case !multipart && r.PartyID != "":
		return errors.New("docintake upload: the JSON variant has no party_id; use Upload")
	case r.Template != "" && r.PartyID != "":
		// Neither is the service's to judge: 422 unless the client routes
		// uploads without them (route_unaddressed).
		return errors.New("docintake upload: give template or party_id, not both")
	}
	return nil
}

func filename(n string) string {
	if n == "" {
		return "order.pdf"
	}
	return n
}

// rewind prepares r for attempt n: the first reads it as it is, a retry
// needs to seek back to the start.
func rewind(r io.Reader, attempt int) error {
	if attempt == 1 {
		return nil
	}
	s, ok := r.(io.Seeker)
	if !ok {
		return errNoRetry
	}
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return errNoRetry
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WaitOutcome polls the document until processing has decided its outcome
// (State.Outcome is not empty: success, rejected, ignored, failed or
// deferred), backing off from 200 ms to 5 s between queries, and returns
// it. It ends with ctx (the error then names the last state seen) or when
// the API refuses the query (an *Error such as CodeDocumentNotFound).
// Integrations that run a webhook do not need it; it suits scripts and
// tests.
func (c *Client) WaitOutcome(ctx context.Context, logID string) (Document, error) {
	var last Document
	for delay := 200 * time.Millisecond; ; delay = min(delay*2, 5*time.Second) {
		d, err := c.Document(ctx, logID)
		if err == nil {
			last = d
			if d.State.Outcome() != "" {
				return d, nil
			}
		} else if ctx.Err() == nil && ErrorCode(err) != "" {
			return last, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			state := string(last.State)
			if state == "" {
				state = "unknown"
			}
			return last, fmt.Errorf("docintake: document %s has no outcome yet (state %s): %w", logID, state, ctx.Err())
		case <-t.C:
		}
	}
}
