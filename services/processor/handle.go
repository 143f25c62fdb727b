package processor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/observability"
	"go.opentelemetry.io/otel/attribute"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"go.uber.org/zap"
)

// worker holds what handling one job needs; handle is safe for concurrent
// use.
type worker struct {
	st          *store.Store
	objects     objectstore.Store
	templates   *catalogue.Catalogue
	engine      pdftext.Engine
	log         *zap.Logger
	prefix      string
	retry       []time.Duration
	maxFailures int
	maxPDF      int64
	budget      time.Duration // a document's template run (INTAKE_TEMPLATE_BUDGET; 0: the default)
	metrics     *metrics
	embedded    embedded.Limits // attachments read for structured documents
	putters     *queue.Workers  // second result puts
}

// Job outcomes, the label values of docintake_processor_jobs_total.
const (
	outSuccess    = "success"
	outRejected   = "rejected"
	outIgnored    = "ignored"
	outDeferred   = "deferred"
	outDLQ        = "dlq"
	outFailed     = "failed_attempt" // recorded, will be retried
	outRetry      = "retry"          // infrastructure error, will be retried
	outDuplicate  = "duplicate"      // document no longer waiting for processing
	outSuperseded = "superseded"     // a newer job for the document exists
	outInvalid    = "invalid"        // undecodable job or unknown document
)

// failure is an attempt that failed because of the document or its
// template (unreadable PDF, extraction deadline, panic, a value the
// template cannot turn into an order): counted, and after
// INTAKE_PROCESSOR_MAX_FAILURES the document goes to dlq. Every other error
// is the infrastructure's (PostgreSQL, S3, shutdown) and is retried without
// counting.
type failure struct {
	stage string
	err   error
}

func (f *failure) Error() string { return f.stage + ": " + f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// handle processes one delivery of a process job; queue.Consume settles the
// message from the returned error (nil acks).
func (w *worker) handle(ctx context.Context, dl queue.Delivery) error {
	job, err := jobs.ParseProcess(dl.Data)
	if err != nil {
		w.metrics.job(outInvalid)
		return queue.Permanent(err)
	}
	// Continue the trace the upload started (carried in the job's headers).
	ctx, span := observability.StartJobSpan(ctx, dl.Header, "github.com/docintake/docintake/services/processor",
		"processor process", attribute.String("docintake.log_id", job.GetLogId()))
	defer span.End()
	doc, pr, err := w.st.ProcessingDocument(ctx, job.GetDocumentId())
	if document.ErrorKind(err) == document.ENOTFOUND {
		w.metrics.job(outInvalid)
		return queue.Permanent(err)
	}
	if err != nil {
		w.metrics.job(outRetry)
		return err
	}
	log := w.log.With(zap.String("log_id", doc.LogID), zap.String("client_id", doc.ClientID),
		zap.Uint32("job", job.GetAttempt()), zap.Uint64("delivery", dl.NumDelivered))
	if !doc.State.Pending() {
		log.Debug("job for a document that is not waiting: duplicate", zap.Stringer("state", doc.State))
		w.metrics.job(outDuplicate)
		return nil
	}
	if int(job.GetAttempt()) < pr.ProcessSeq {
		log.Debug("superseded job dropped", zap.Int("current", pr.ProcessSeq))
		w.metrics.job(outSuperseded)
		return nil
	}
	var pre *extracted
	if doc.Template == "" { // sent without template or party_id: route.go (issue 29)
		var done bool
		if doc, pre, done, err = w.route(ctx, log, doc, dl); done {
			return err
		}
	}

	// The attempt's template version is resolved once, here, and used for
	// everything that follows: a push during processing, or a second
	// processor working on the same document, cannot mix versions.
	v, _, err := w.templates.PinAttempt(ctx, doc, pr.Attempt, actor)
	if err != nil {
		if errors.Is(err, catalogue.ErrTemplateUnavailable) {
			return w.failed(ctx, log, doc, dl, &failure{"template", err})
		}
		w.metrics.job(outRetry)
		return err
	}
	log = log.With(zap.String("template_version", v.String()))

	res, err := w.process(ctx, doc, v, pre)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			return w.failed(ctx, log, doc, dl, f)
		}
		if dl.LastAttempt() {
			// Consume would drop the message; leave no document behind.
			return w.toDLQ(ctx, log, doc, nil, fmt.Sprintf("job delivered %d times, last error: %v", dl.NumDelivered, err))
		}
		w.metrics.job(outRetry)
		return err
	}
	return w.settle(ctx, log, doc, pr, dl, v, res)
}

// settle records what the template run decided: a success goes through the
// flag and duplicate checks, a rejection may be held for review.
func (w *worker) settle(ctx context.Context, log *zap.Logger, doc document.Document, pr store.Processing,
	dl queue.Delivery, v *catalogue.Version, res *result) error {
	switch res.outcome.Status {
	case template.OutcomeSuccess:
		if held, err := w.flagOrder(ctx, log, doc, pr.Attempt, v, res); held { // flags.go: prices, dates
			return err
		}
		return w.deliverOrder(ctx, log, doc, v, res) // duplicates.go: once per PO content
	case template.OutcomeRejected:
		if held, err := w.holdForReview(ctx, log, doc, v, res); held { // review.go
			return err
		}
		r := res.outcome.Reason
		return w.finish(ctx, log, doc, store.Change{To: document.StateProcessedRejected, Reason: &r,
			Detail: res.outcome.Detail, DocumentDate: res.date()}, outRejected)
	case template.OutcomeIgnored:
		return w.finish(ctx, log, doc, store.Change{To: document.StateProcessedIgnored, Reason: noReason(),
			Detail: res.outcome.Detail, DocumentDate: res.date()}, outIgnored)
	case template.OutcomeDeferred:
		w.keepReading(ctx, log, doc, v, res) // review.go: what the review page maps
		return w.deferred(ctx, log, doc, pr, dl, res.outcome)
	}
	return w.failed(ctx, log, doc, dl, &failure{"template", fmt.Errorf("unknown outcome %q", res.outcome.Status)})
}

func noReason() *document.Reason { r := document.Reason(""); return &r }

// result is one extraction.
type result struct {
	outcome *template.Outcome
	order   *order.Order
	xml     []byte // success only
	json    []byte // success only
	source  string // "text (pdftotext)" or the embedded document's Source
}

// date is the order's date for documents.document_date (nil when the PDF
// printed none).
func (r *result) date() *time.Time {
	if r.order == nil || r.order.IssueDate.IsZero() {
		return nil
	}
	d := r.order.IssueDate
	t := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
	return &t
}

// process reads, extracts and renders a document (pre: what routing read
// already, nil for none). It returns a *failure for problems of the
// document or its template (a panic included) and other errors for the
// infrastructure's.
func (w *worker) process(ctx context.Context, doc document.Document, v *catalogue.Version, pre *extracted) (res *result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &failure{"panic", fmt.Errorf("%v\n%s", r, debug.Stack())}
		}
	}()
	pdf, err := pre.read(ctx, w, doc)
	if err != nil {
		return nil, err
	}
	m := mapper{st: w.st, clientID: doc.ClientID}
	opts := template.RunOptions{Template: v.Name, Mapper: m, Mode: doc.ResultMode, ReceivedAt: doc.CreatedAt, Budget: w.budget,
		Area: catalogue.AreaFunc(w.engine, pdf)}
	if v.Builtin() {
		// The built-in reader's Set is empty: an attachment is read by the
		// engine's built-in order template, as without a template name.
		opts.Template = ""
	}
	// A business document attached to the PDF wins over its printed text.
	run, source, err := w.structured(ctx, w.log.With(zap.String("log_id", doc.LogID)), v.Set, pdf, opts)
	if run == nil && err == nil {
		text, took, xerr := pre.extract(ctx, w, pdf)
		if xerr != nil {
			w.metrics.extraction(w.engine.Name(), took)
			if ctx.Err() != nil { // hard stop: not the document's fault
				return nil, xerr
			}
			return nil, &failure{"extract", xerr}
		}
		w.metrics.extraction(strings.Join(text.Engines(), "+"), took)
		if note := template.DamageNote(text.Damage); note != "" { // an event, as the warnings
			text.Warnings = append(text.Warnings, note)
		}
		for _, warn := range text.Warnings {
			// A page left unread (OCR over its budget) explains a rejection
			// for a missing value, or an order read without that page.
			if err := w.st.RecordEvent(ctx, doc.ID, doc.State, actor, "text extraction: "+warn); err != nil {
				return nil, fmt.Errorf("record extraction warning: %w", err)
			}
		}
		source = "text (" + strings.Join(text.Engines(), "+") + ")"
		var via string
		if run, via, err = runText(ctx, v, text.String(), opts); via != "" { // generic.go
			source += " " + via
		}
		template.UnreadableVerdict(run, text.String(), text.Damage) // never not_an_order for an unread PDF
	}
	if err != nil {
		if ctx.Err() != nil || m.failed(err) {
			return nil, err
		}
		return nil, &failure{"template", err}
	}
	run.Outcome.Detail = withSource(source, run.Outcome.Detail)
	res = &result{outcome: run.Outcome, order: run.Order, source: source}
	if run.Outcome.Status != template.OutcomeSuccess {
		return res, nil
	}
	if deferred, err := w.units(ctx, doc, res); err != nil || deferred { // units.go
		return res, err
	}
	if res.xml, err = opentrans.Marshal(run.Order, opentrans.WriteOptions{GenerationTime: time.Now()}); err != nil {
		return nil, &failure{"opentrans", err}
	}
	if res.json, err = marshalResult(doc, v, run.Order, source); err != nil {
		return nil, &failure{"json", err}
	}
	return res, nil
}

// readSource reads the document's PDF. A missing, oversized or unaddressable
// source is the document's failure; a store that does not answer is not.
func (w *worker) readSource(ctx context.Context, doc document.Document) ([]byte, error) {
	key := doc.SourceKey
	rc, err := w.objects.Get(ctx, key)
	if err != nil {
		if k := document.ErrorKind(err); k == document.ENOTFOUND || k == document.EINVALID {
			return nil, &failure{"source", err}
		}
		return nil, fmt.Errorf("read source %s: %w", key, err)
	}
	defer rc.Close()
	// The size is known from the upload: read into one buffer of that size
	// instead of letting io.ReadAll grow one by doubling (a third of the
	// processor's allocated bytes in the profile).
	buf := bytes.NewBuffer(make([]byte, 0, min(max(doc.FileSize, 0), w.maxPDF)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(rc, w.maxPDF+1)); err != nil {
		return nil, fmt.Errorf("read source %s: %w", key, err)
	}
	pdf := buf.Bytes()
	if int64(len(pdf)) > w.maxPDF {
		return nil, &failure{"source", fmt.Errorf("source %s is larger than %d bytes", key, w.maxPDF)}
	}
	return pdf, nil
}

// succeed stores the results and commits processed_success.
func (w *worker) succeed(ctx context.Context, log *zap.Logger, doc document.Document, res *result) error {
	c, err := w.putResults(ctx, doc, res)
	if err != nil {
		w.metrics.job(outRetry)
		return err
	}
	return w.finish(ctx, log, doc, c, outSuccess)
}

// putResults stores the results and returns the processed_success change
// that names them.
func (w *worker) putResults(ctx context.Context, doc document.Document, res *result) (store.Change, error) {
	// Keys follow the upload's date (like the source), so a retried
	// document overwrites its own earlier results instead of leaving copies.
	xmlKey := objectstore.ResultKey(doc.LogID, doc.CreatedAt, "xml")
	jsonKey := objectstore.ResultKey(doc.LogID, doc.CreatedAt, "json")
	// The two puts go out together (the JSON on a putter): the document
	// waits for one object store round trip instead of two, and a worker's
	// time is mostly such waits.
	put := func(key, ct string, body []byte) error {
		if err := w.objects.Put(ctx, key, bytes.NewReader(body), int64(len(body)), ct); err != nil {
			return fmt.Errorf("write result %s: %w", key, err)
		}
		return nil
	}
	jsonDone := make(chan error, 1)
	w.putters.Go(func() { jsonDone <- put(jsonKey, "application/json", res.json) })
	err := put(xmlKey, "application/xml", res.xml)
	if jerr := <-jsonDone; err == nil {
		err = jerr
	}
	if err != nil {
		return store.Change{}, err
	}
	xmlURI, jsonURI := w.objects.URI(xmlKey), w.objects.URI(jsonKey)
	return store.Change{To: document.StateProcessedSuccess, Reason: noReason(), Detail: res.outcome.Detail,
		ResultKey: &xmlKey, ResultPath: &xmlURI, ResultJSONKey: &jsonKey, ResultJSONPath: &jsonURI, DocumentDate: res.date()}, nil
}

// finish commits a processed_* state with the dispatcher's job. Every
// processed_* state is announced; the dispatcher decides whether an ignored
// document gets a webhook (the template's ignored_feedback).
func (w *worker) finish(ctx context.Context, log *zap.Logger, doc document.Document, c store.Change, outcome string) error {
	c.DocumentID, c.From, c.Actor = doc.ID, doc.State, actor
	c.Outbox = append(c.Outbox, w.deliverJob(ctx, doc, c.To))
	if _, err := w.st.Transition(ctx, c); err != nil {
		return w.transitionFailed(log, err)
	}
	w.metrics.job(outcome)
	log.Info("document processed", zap.Stringer("state", c.To), zap.String("detail", c.Detail))
	return nil
}

// transitionFailed settles a lost compare-and-set as a duplicate (another
// worker finished the document first) and retries anything else.
func (w *worker) transitionFailed(log *zap.Logger, err error) error {
	if document.ErrorKind(err) == document.ECONFLICT {
		log.Info("document moved by another worker meanwhile", zap.Error(err))
		w.metrics.job(outDuplicate)
		return nil
	}
	w.metrics.job(outRetry)
	return err
}

// deferred handles a missing mapping: deferred_for_retry (announced to the
// client) and a redelivery after the next step of the retry schedule, or
// dlq when the schedule is used up.
func (w *worker) deferred(ctx context.Context, log *zap.Logger, doc document.Document, pr store.Processing, dl queue.Delivery, out *template.Outcome) error {
	reason := document.ReasonMappingNotResolved
	if pr.Deferrals >= len(w.retry) {
		return w.toDLQ(ctx, log, doc, &reason, fmt.Sprintf("retry schedule exhausted after %d deferrals: %s", pr.Deferrals, out.Detail))
	}
	delay := w.retry[pr.Deferrals]
	c := store.Change{DocumentID: doc.ID, From: doc.State, To: document.StateDeferredForRetry, Reason: &reason, Actor: actor,
		Detail: fmt.Sprintf("%s (deferral %d of %d, next attempt in %s)", out.Detail, pr.Deferrals+1, len(w.retry), delay),
		Outbox: []store.OutboxRow{w.deliverJob(ctx, doc, document.StateDeferredForRetry)}}
	if _, err := w.st.TransitionDeferred(ctx, c, store.Deferral{RetryAt: time.Now().Add(delay)}); err != nil {
		return w.transitionFailed(log, err)
	}
	w.metrics.job(outDeferred)
	log.Info("document deferred", zap.String("detail", c.Detail))
	if dl.LastAttempt() {
		// The server will not deliver this message again: ack it and let
		// the sweeper publish a new job once retry_at has passed.
		return nil
	}
	return queue.RetryAfter(delay, errors.New(out.Detail))
}

// failed counts a failed attempt; the last allowed one moves the document
// to dlq, the others are retried after INTAKE_PROCESSOR_FAILURE_BACKOFF.
func (w *worker) failed(ctx context.Context, log *zap.Logger, doc document.Document, dl queue.Delivery, f *failure) error {
	n, err := w.st.RecordFailure(ctx, doc.ID, doc.State, actor, truncate(f.Error(), 4000))
	if err != nil {
		return w.transitionFailed(log, err)
	}
	log.Warn("processing failed", zap.Int("failures", n), zap.Error(f))
	if n >= w.maxFailures || dl.LastAttempt() {
		return w.toDLQ(ctx, log, doc, noReason(), fmt.Sprintf("%d failed attempts, last: %s", n, truncate(f.Error(), 2000)))
	}
	w.metrics.job(outFailed)
	return f
}

// toDLQ moves a document to dlq and tells the client (status failed).
// reason nil keeps the current status reason.
func (w *worker) toDLQ(ctx context.Context, log *zap.Logger, doc document.Document, reason *document.Reason, detail string) error {
	c := store.Change{DocumentID: doc.ID, From: doc.State, To: document.StateDLQ, Reason: reason, Actor: actor,
		Detail: detail, Outbox: []store.OutboxRow{w.deliverJob(ctx, doc, document.StateDLQ)}}
	if _, err := w.st.Transition(ctx, c); err != nil {
		return w.transitionFailed(log, err)
	}
	w.metrics.job(outDLQ)
	log.Error("document moved to dlq", zap.String("detail", detail))
	return nil
}

// deliverJob is the dispatcher's job announcing doc in state to, with a new
// delivery id (the webhook-id of all attempts of this delivery).
func (w *worker) deliverJob(ctx context.Context, doc document.Document, to document.State) store.OutboxRow {
	doc.State = to
	// The trace continues into the dispatcher through the message headers.
	return lifecycle.DeliverJob(ctx, w.prefix, doc, lifecycle.NewDeliveryID())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// mapper looks mappings up in PostgreSQL, scoped to the document's client.
type mapper struct {
	st       *store.Store
	clientID string
}

func (m mapper) Lookup(ctx context.Context, kind, key string) (string, bool, error) {
	v, ok, err := m.st.LookupMapping(ctx, m.clientID, kind, key)
	if err != nil {
		return "", false, &lookupError{err}
	}
	return v, ok, nil
}

// lookupError marks a failed mapping query (the database's problem, not
// the document's) through the template engine's error wrapping.
type lookupError struct{ err error }

func (e *lookupError) Error() string { return e.err.Error() }
func (e *lookupError) Unwrap() error { return e.err }

func (mapper) failed(err error) bool {
	var le *lookupError
	return errors.As(err, &le)
}
