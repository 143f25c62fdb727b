package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/jobspb"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/webhook"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
)

type dispatcher struct {
	cfg     config.Config
	prefix  string
	store   *store.Store
	objects objectstore.Store
	hook    *webhook.Client
	pub     *queue.Publisher
	logger  *zap.Logger
	tuning  Tuning
	limits  *limiter
	metrics *metrics
}

// errClientBusy makes Consume nak a job whose client has no free slot.
var errClientBusy = errors.New("client has no free delivery slot")

// handle runs one delivery job: at most one HTTP attempt, then the message
// is acked (retries are scheduled in PostgreSQL) unless something transient
// failed before the attempt.
func (d *dispatcher) handle(ctx context.Context, m queue.Delivery) error {
	job, err := jobs.ParseDeliver(m.Data)
	if err != nil {
		return queue.Permanent(err)
	}
	// Continue the trace the upload started (carried in the job's headers).
	ctx, span := observability.StartJobSpan(ctx, m.Header, "github.com/docintake/docintake/services/dispatcher",
		"dispatcher deliver", attribute.String("docintake.log_id", job.GetLogId()),
		attribute.String("docintake.delivery_id", job.GetDeliveryId()))
	defer span.End()
	// This process's count comes first, so jobs of a client whose calls
	// all run here bounce without a round trip; the shared slot is leased
	// with the claim.
	local, ok := d.limits.local(job.GetClientId())
	if !ok {
		return d.busy(ctx, m, job, false)
	}
	defer local()

	dv, doc, client, pending, err := d.loadPending(ctx, job)
	if !pending {
		return err
	}
	if done, err := d.settleUndeliverable(ctx, dv, doc, client); done {
		return err
	}
	dv, slot, res, err := d.limits.claim(ctx, job.GetClientId(), dv.ID, d.cfg.WebhookTimeout+d.tuning.LeaseMargin)
	switch {
	case err != nil:
		return err
	case res == store.ClaimBusy:
		return d.busy(ctx, m, job, true)
	case res == store.ClaimTaken:
		return nil // another worker is attempting it right now
	}
	defer slot.release(ctx)
	return d.attempt(ctx, dv, doc, client, slot)
}

// loadPending returns the job's delivery with its document and client.
// pending is false when the delivery is not (or no longer) to be attempted:
// handle then returns err, nil for a stale copy or a delivery already
// settled, whose document loadPending completes when the process died
// before finishing it.
func (d *dispatcher) loadPending(ctx context.Context, job *jobspb.DeliverJob) (dv store.Delivery, doc document.Document, client document.Client, pending bool, err error) {
	// A job's first copy creates the delivery and reads the document with
	// its client in the same statement; a later copy reads all three.
	dv, doc, client, loaded, err := d.store.EnsureDeliveryWithDocument(ctx, deliveryFromJob(job), d.tuning.Backstop)
	if err != nil {
		return dv, doc, client, false, err
	}
	if int(job.GetAttempt()) < dv.Claim {
		return dv, doc, client, false, nil // a stale copy: the scheduler has republished this delivery
	}
	switch dv.Outcome {
	case store.DeliveryDelivered:
		// Delivered, but the process may have died before finishing the
		// document: complete it now.
		doc, err := d.store.Document(ctx, dv.DocumentID)
		if err != nil {
			return dv, doc, client, false, err
		}
		return dv, doc, client, false, d.finish(ctx, dv, doc)
	case store.DeliveryPending:
	default:
		return dv, doc, client, false, nil
	}
	if !loaded {
		// The document and its client in one read: the client is needed
		// for every delivery that goes out, which is nearly all of them.
		if doc, client, err = d.store.DocumentWithClient(ctx, dv.DocumentID); err != nil {
			if document.ErrorKind(err) == document.ENOTFOUND {
				return dv, doc, client, false, queue.Permanent(err)
			}
			return dv, doc, client, false, err
		}
	}
	return dv, doc, client, true, nil
}

// settleUndeliverable settles a pending delivery that is not to be sent:
// an ignored document whose template wants no feedback, a document that
// has moved on, a client whose endpoint is disabled. done reports that it
// did (or failed to: err).
func (d *dispatcher) settleUndeliverable(ctx context.Context, dv store.Delivery, doc document.Document, client document.Client) (done bool, err error) {
	if dv.State == document.StateProcessedIgnored {
		// Asked of the version the attempt was pinned to, recorded when
		// the processor pinned it: a push since then does not change the
		// answer, and the dispatcher compiles no template.
		want, err := d.store.IgnoredFeedback(ctx, doc.ID)
		if err != nil {
			return true, err
		}
		if !want {
			return true, d.closeIgnored(ctx, dv, doc)
		}
	}
	if !document.Deliverable(dv.State, doc.State) {
		detail := fmt.Sprintf("document is %s now", doc.State)
		d.metrics.deliveries.WithLabelValues(string(dv.Status), "superseded").Inc()
		return true, d.store.SetDeliveryOutcome(ctx, dv.ID, store.DeliverySuperseded, nil, detail)
	}
	if !client.WebhookEnabled {
		// Parked: due at once, but the scheduler skips disabled clients
		// until `intakectl clients enable`.
		now := time.Now()
		return true, d.store.SetDeliveryOutcome(ctx, dv.ID, store.DeliveryPending, &now, "endpoint disabled")
	}
	return false, nil
}

// busy turns away a job whose client has no free slot, here or
// system-wide: nak with a growing delay, or on the broker's last delivery
// a handoff to the scheduler, which republishes it as a fresh message.
// ensured says whether the delivery row exists already.
func (d *dispatcher) busy(ctx context.Context, m queue.Delivery, job *jobspb.DeliverJob, ensured bool) error {
	d.metrics.busy.Inc()
	delay := jitter(d.tuning.BusyDelay*time.Duration(min(m.NumDelivered, 4)), 0.5)
	if !m.LastAttempt() {
		return queue.RetryAfter(delay, errClientBusy)
	}
	if !ensured {
		if _, err := d.store.EnsureDelivery(ctx, deliveryFromJob(job), d.tuning.Backstop); err != nil {
			return err
		}
	}
	return d.store.RescheduleDelivery(ctx, job.GetDeliveryId(), time.Now().Add(delay))
}

func deliveryFromJob(j *jobspb.DeliverJob) store.Delivery {
	return store.Delivery{ID: j.GetDeliveryId(), DocumentID: j.GetDocumentId(), ClientID: j.GetClientId(),
		LogID: j.GetLogId(), State: document.State(j.GetState()), Status: document.Status(j.GetStatus())}
}

// closeIgnored finishes an ignored document whose template wants no
// feedback: no webhook call.
func (d *dispatcher) closeIgnored(ctx context.Context, dv store.Delivery, doc document.Document) error {
	err := d.store.WithTx(ctx, func(tx *store.Store) error {
		if doc.State == document.StateProcessedIgnored {
			if _, err := tx.Transition(ctx, store.Change{DocumentID: doc.ID, From: doc.State, To: document.StateFinishedIgnored,
				Actor: "dispatcher", Detail: "template " + doc.Template + " asks for no feedback on ignored documents"}); err != nil {
				return err
			}
		}
		return tx.SetDeliveryOutcome(ctx, dv.ID, store.DeliverySkipped, nil, "no feedback requested")
	})
	if document.ErrorKind(err) == document.ECONFLICT {
		return nil // someone else closed it
	}
	if err == nil {
		d.metrics.deliveries.WithLabelValues(string(dv.Status), "skipped").Inc()
	}
	return err
}

// payload is the webhook body of the interface's Events part.
type payload struct {
	Template     string  `json:"template"`
	MessageID    string  `json:"message_id"`
	LogID        string  `json:"log_id"`
	Result       *string `json:"result"`
	Status       string  `json:"status"`
	StatusReason *string `json:"status_reason"`
}

// body builds the JSON body: the result XML on success, the reason's wire
// value otherwise.
func (d *dispatcher) body(ctx context.Context, dv store.Delivery, doc document.Document) ([]byte, error) {
	p := payload{Template: doc.Template, MessageID: doc.MessageID, LogID: doc.LogID, Status: string(dv.Status)}
	if dv.Status == document.StatusSuccess {
		xml, err := d.readResult(ctx, doc)
		if err != nil {
			return nil, err
		}
		p.Result = &xml
	} else if doc.StatusReason != "" {
		w := doc.StatusReason.WireValue()
		p.StatusReason = &w
	}
	return json.Marshal(p)
}

// maxResultBytes bounds the XML read into memory for one webhook body.
const maxResultBytes = 32 << 20

func (d *dispatcher) readResult(ctx context.Context, doc document.Document) (string, error) {
	if doc.ResultKey == "" {
		return "", fmt.Errorf("document %s has no result", doc.LogID)
	}
	r, err := d.objects.Get(ctx, doc.ResultKey)
	if err != nil {
		return "", fmt.Errorf("read result of %s: %w", doc.LogID, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxResultBytes+1))
	if err != nil {
		return "", fmt.Errorf("read result of %s: %w", doc.LogID, err)
	}
	if len(b) > maxResultBytes {
		return "", fmt.Errorf("result of %s exceeds %d bytes", doc.LogID, maxResultBytes)
	}
	return string(b), nil
}

// attempt makes one HTTP call and records it with its consequences.
func (d *dispatcher) attempt(ctx context.Context, dv store.Delivery, doc document.Document, client document.Client, slot *heldSlot) error {
	body, err := d.body(ctx, dv, doc)
	if err != nil {
		// Nothing was sent (result unreadable, object store down): give the
		// lease back and try again after the backstop interval (the slot
		// goes back with handle's release).
		next := time.Now().Add(d.tuning.Backstop)
		d.logger.Warn("cannot build webhook body, delivery postponed", zap.String("delivery", dv.ID),
			zap.String("log_id", dv.LogID), zap.Time("next_attempt_at", next), zap.Error(err))
		return d.store.SetDeliveryOutcome(context.WithoutCancel(ctx), dv.ID, store.DeliveryPending, &next, err.Error())
	}
	res := d.hook.Send(ctx, webhook.Request{URL: client.WebhookURL, ID: dv.ID, Timestamp: time.Now(), Body: body,
		BearerToken: client.WebhookToken, Secret: client.SigningSecret})
	d.metrics.latency.Observe(res.Latency.Seconds())

	a := store.DeliveryAttempt{DeliveryID: dv.ID, N: dv.Attempts, StatusCode: res.StatusCode, Latency: res.Latency,
		BodyPrefix: string(res.BodyPrefix)}
	if res.Err != nil {
		a.Error = res.Err.Error()
	}
	summary := fmt.Sprintf("delivery %s attempt %d: %s in %s", dv.ID, dv.Attempts, codeText(res), res.Latency.Round(time.Millisecond))
	// Recording must happen even if we are being stopped: the call was made.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	switch {
	case res.OK():
		d.metrics.attempts.WithLabelValues(codeClass(res.StatusCode), "delivered").Inc()
		return d.delivered(rctx, dv, doc, a, summary, slot)
	case res.StatusCode == http.StatusGone:
		d.metrics.attempts.WithLabelValues(codeClass(res.StatusCode), "disabled").Inc()
		return d.gone(rctx, dv, doc, a, summary, slot)
	}
	if dv.Failures+1 > len(d.cfg.WebhookRetry) {
		d.metrics.attempts.WithLabelValues(codeClass(res.StatusCode), "failed").Inc()
		return d.exhausted(rctx, dv, doc, a, summary, slot)
	}
	delay := jitter(d.cfg.WebhookRetry[dv.Failures], 0.2)
	if res.RetryAfter > 0 {
		delay = res.RetryAfter // the client knows when it can take more
	}
	d.metrics.attempts.WithLabelValues(codeClass(res.StatusCode), "retry").Inc()
	_, err = slot.record(rctx, store.AttemptResult{Attempt: a, Outcome: store.DeliveryPending, CountFailure: true,
		NextAttempt: time.Now().Add(delay)})
	if err != nil {
		return err
	}
	d.logger.Info("webhook attempt failed, retry scheduled", zap.String("delivery", dv.ID), zap.String("log_id", dv.LogID),
		zap.String("client_id", dv.ClientID), zap.Int("attempt", dv.Attempts), zap.Duration("retry_in", delay), zap.NamedError("cause", res.Err))
	return nil
}

func codeText(res webhook.Result) string {
	if res.StatusCode == 0 {
		return "no response"
	}
	return fmt.Sprintf("HTTP %d", res.StatusCode)
}

func codeClass(code int) string {
	if code < 100 || code > 599 {
		return "none"
	}
	return fmt.Sprintf("%dxx", code/100)
}

// delivered records a 2xx: attempt, delivery, sent_* and finished_* (each
// step with its event) in one statement.
func (d *dispatcher) delivered(ctx context.Context, dv store.Delivery, doc document.Document, a store.DeliveryAttempt, summary string, slot *heldSlot) error {
	for range 2 { // a second try when the document moved under us
		var changes []store.Change
		if to := document.SentState(dv.State, doc.State); to != "" {
			changes = append(changes, store.Change{DocumentID: doc.ID, From: doc.State, To: to, Actor: "dispatcher", Detail: summary})
			if fin, ok := d.finishChange(dv, to, doc.ID); ok {
				changes = append(changes, fin)
			}
		} else if fin, ok := d.finishChange(dv, doc.State, doc.ID); ok {
			changes = append(changes, fin) // sent already: close it with the attempt
		}
		_, err := slot.record(ctx, store.AttemptResult{Attempt: a, Outcome: store.DeliveryDelivered, Changes: changes})
		if document.ErrorKind(err) == document.ECONFLICT && len(changes) > 0 {
			if doc, err = d.store.Document(ctx, doc.ID); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		d.metrics.deliveries.WithLabelValues(string(dv.Status), "delivered").Inc()
		return nil
	}
	return fmt.Errorf("delivery %s: document %s keeps changing", dv.ID, doc.LogID)
}

// finishChange is the step sent_* → finished_* of a delivered document in
// state from; ok is false when from has no finished state.
func (d *dispatcher) finishChange(dv store.Delivery, from document.State, docID string) (store.Change, bool) {
	to := from.FinishedState()
	if to == "" {
		return store.Change{}, false
	}
	return store.Change{DocumentID: docID, From: from, To: to, Actor: "dispatcher", Detail: "delivery " + dv.ID + " recorded"}, true
}

// finish closes a delivered document: sent_* → finished_*. Idempotent.
// It completes a delivery whose process died between the 2xx and the
// state update, when the document was moved by an older dispatcher.
func (d *dispatcher) finish(ctx context.Context, dv store.Delivery, doc document.Document) error {
	c, ok := d.finishChange(dv, doc.State, doc.ID)
	if !ok {
		return nil
	}
	_, err := d.store.Transition(ctx, c)
	if document.ErrorKind(err) == document.ECONFLICT {
		return nil // a concurrent worker finished it
	}
	return err
}

// gone handles 410: the client's endpoint is disabled (ops alert) and the
// delivery waits, not counting the attempt against the schedule, until an
// operator re-enables the endpoint.
func (d *dispatcher) gone(ctx context.Context, dv store.Delivery, doc document.Document, a store.DeliveryAttempt, summary string, slot *heldSlot) error {
	if _, err := slot.record(ctx, store.AttemptResult{Attempt: a, Outcome: store.DeliveryPending, NextAttempt: time.Now()}); err != nil {
		return err
	}
	if err := d.store.SetWebhookEnabled(ctx, dv.ClientID, false); err != nil {
		return err
	}
	d.metrics.disabled.Inc()
	d.logger.Error("webhook endpoint answered 410 Gone and is disabled; deliveries wait for `intakectl clients enable`",
		zap.String("client_id", dv.ClientID), zap.String("delivery", dv.ID))
	return d.store.RecordEvent(ctx, doc.ID, doc.State, "dispatcher", summary+"; endpoint of client "+dv.ClientID+" disabled")
}

// exhausted records the last failed attempt and gives up: outcomes end in
// finished_with_failure (the result stays and can be redelivered);
// notifications just stay undelivered.
func (d *dispatcher) exhausted(ctx context.Context, dv store.Delivery, doc document.Document, a store.DeliveryAttempt, summary string, slot *heldSlot) error {
	for range 2 {
		var changes []store.Change
		if to := document.ExhaustedState(dv.State, doc.State); to != "" {
			changes = append(changes, store.Change{DocumentID: doc.ID, From: doc.State, To: to,
				Actor: "dispatcher", Detail: summary + "; retry schedule exhausted"})
		}
		_, err := slot.record(ctx, store.AttemptResult{Attempt: a, Outcome: store.DeliveryFailed, CountFailure: true, Changes: changes})
		if document.ErrorKind(err) == document.ECONFLICT && len(changes) > 0 {
			if doc, err = d.store.Document(ctx, doc.ID); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		d.metrics.deliveries.WithLabelValues(string(dv.Status), "failed").Inc()
		d.logger.Warn("webhook delivery failed for good", zap.String("delivery", dv.ID), zap.String("log_id", dv.LogID),
			zap.String("client_id", dv.ClientID), zap.Int("attempts", dv.Attempts))
		return nil
	}
	return fmt.Errorf("delivery %s: document %s keeps changing", dv.ID, doc.LogID)
}

// jitter spreads d by ±frac so that retries of many deliveries that failed
// together (a client outage) do not arrive together.
func jitter(d time.Duration, frac float64) time.Duration {
	return time.Duration(float64(d) * (1 - frac + 2*frac*rand.Float64()))
}

// schedule republishes due deliveries until ctx is done.
func (d *dispatcher) schedule(ctx context.Context) {
	t := time.NewTicker(d.tuning.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			n, err := d.store.ClaimDueDeliveries(ctx, 200, d.tuning.Backstop, d.republish)
			if err != nil {
				if ctx.Err() == nil {
					d.logger.Warn("republish due deliveries", zap.Error(err))
				}
				break
			}
			if n < 200 {
				break
			}
		}
	}
}

// republish publishes the job of claim dv.Claim; its dedup id includes the
// claim (jobs.RepublishMsgID), so each republish is a new message and a
// repeated publish of one claim is dropped by the stream.
func (d *dispatcher) republish(ctx context.Context, dv store.Delivery) error {
	m := jobs.Republish(d.prefix, jobs.Delivery{ID: dv.ID, LogID: dv.LogID, DocumentID: dv.DocumentID,
		ClientID: dv.ClientID, State: dv.State, Status: dv.Status}, dv.Claim, time.Now())
	return d.pub.Publish(ctx, m.Subject, m.MsgID, m.Payload)
}
