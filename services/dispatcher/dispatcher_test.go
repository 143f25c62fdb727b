package dispatcher_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// Every kind of outcome, checked field by field against the interface's
// Events part and DESIGN.md "Webhook body and statuses".
func TestDeliversEveryOutcome(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rc := newReceiver(t)
	b.client("acme", rc.URL+"/hook")
	b.start(fastTuning)

	success := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	rejected := b.document("acme", "quiet", document.StateProcessedRejected, document.ReasonNotAnInvoice)
	deferred := b.document("acme", "quiet", document.StateDeferredForRetry, document.ReasonMappingNotResolved)
	dlq := b.document("acme", "quiet", document.StateDLQ, "")
	ignoredQuiet := b.document("acme", "quiet", document.StateProcessedIgnored, "")
	ignoredLoud := b.document("acme", "feedback", document.StateProcessedIgnored, "")

	b.waitState(success.LogID, document.StateFinishedSuccess, 20*time.Second)
	b.waitState(rejected.LogID, document.StateFinishedRejected, 20*time.Second)
	b.waitState(ignoredQuiet.LogID, document.StateFinishedIgnored, 20*time.Second)
	b.waitState(ignoredLoud.LogID, document.StateFinishedIgnored, 20*time.Second)
	waitFor(t, 20*time.Second, func() error {
		for _, d := range []doc{deferred, dlq} {
			dels, err := b.st.Deliveries(t.Context(), d.ID)
			if err != nil {
				return err
			}
			if len(dels) != 1 || dels[0].Outcome != store.DeliveryDelivered {
				return errorf("notification of %s not delivered: %+v", d.LogID, dels)
			}
		}
		return nil
	})

	type body struct {
		Template     string  `json:"template"`
		MessageID    string  `json:"message_id"`
		LogID        string  `json:"log_id"`
		Result       *string `json:"result"`
		Status       string  `json:"status"`
		StatusReason *string `json:"status_reason"`
	}
	calls := rc.snapshot()
	require.Len(t, calls, 5, "ignored without feedback is not sent")
	require.Empty(t, callsFor(calls, ignoredQuiet.LogID))
	want := map[string]struct {
		status, reason string // "" reason: null
		result         string
	}{
		success.LogID:     {"success", "", success.XML},
		rejected.LogID:    {"rejected", "not_an_order", ""},
		deferred.LogID:    {"deferred_for_retry", "mapping_not_resolved", ""},
		dlq.LogID:         {"failed", "", ""},
		ignoredLoud.LogID: {"ignored", "", ""},
	}
	for _, c := range calls {
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(c.Body, &raw))
		require.Len(t, raw, 6, "exactly the six fields of the interface: %s", c.Body)
		var got body
		require.NoError(t, json.Unmarshal(c.Body, &got))
		w, ok := want[got.LogID]
		require.True(t, ok, "unexpected delivery %s", c.Body)
		require.Equal(t, w.status, got.Status)
		if w.reason == "" {
			require.Nil(t, got.StatusReason, got.LogID)
			require.JSONEq(t, "null", string(raw["status_reason"]))
		} else {
			require.NotNil(t, got.StatusReason)
			require.Equal(t, w.reason, *got.StatusReason)
		}
		if w.result == "" {
			require.JSONEq(t, "null", string(raw["result"]))
		} else {
			require.NotNil(t, got.Result)
			require.Equal(t, w.result, *got.Result, "the XML text as a JSON string")
		}
		require.Contains(t, []string{"quiet", "feedback"}, got.Template)
		require.True(t, strings.HasPrefix(got.MessageID, "mail-"))

		require.Equal(t, "application/json", c.Header.Get("Content-Type"))
		require.Equal(t, "Bearer hook-token-acme", c.Header.Get("Authorization"))
		require.True(t, strings.HasPrefix(c.Header.Get("webhook-id"), "msg_"))
		ts, err := strconv.ParseInt(c.Header.Get("webhook-timestamp"), 10, 64)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), time.Unix(ts, 0), time.Minute)
		verifySignature(t, c)
	}

	// History: processed → sent → finished, each step naming the delivery
	// and its attempt.
	evs, err := b.st.Events(t.Context(), success.ID)
	require.NoError(t, err)
	var path []string
	for _, e := range evs {
		path = append(path, string(e.To))
		if e.To == document.StateSentSuccess {
			require.Contains(t, e.Detail, "attempt 1: HTTP 204")
			require.Contains(t, e.Detail, callsFor(calls, success.LogID)[0].Header.Get("webhook-id"))
		}
	}
	require.Equal(t, []string{"received", "processed_success", "sent_success", "finished_success"}, path)
	// Every attempt is stored.
	dels, err := b.st.Deliveries(t.Context(), success.ID)
	require.NoError(t, err)
	require.Len(t, dels, 1)
	atts, err := b.st.DeliveryAttempts(t.Context(), dels[0].ID)
	require.NoError(t, err)
	require.Len(t, atts, 1)
	require.Equal(t, 204, atts[0].StatusCode)
	// The deferred and dlq documents keep their state.
	d, err := b.st.Document(t.Context(), deferred.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateDeferredForRetry, d.State)
	require.Equal(t, 5.0, b.metric("docintake_dispatcher_attempts_total", "2xx", "delivered"))
}

// A client that is down for the whole schedule: finished_with_failure; after
// `intakectl redeliver` it is delivered under a new webhook-id with the same
// body and the document ends finished_success.
func TestDownForWholeScheduleThenRedeliver(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rc := newReceiver(t)
	rc.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ call) { w.WriteHeader(http.StatusInternalServerError) })
	b.client("acme", rc.URL)
	b.start(fastTuning)

	d := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	failed := b.waitState(d.LogID, document.StateFinishedWithFailure, 20*time.Second)
	require.NotEmpty(t, failed.ResultPath, "the result stays")
	first := rc.snapshot()
	require.Len(t, first, 4, "one attempt plus the three retries of the schedule")
	for _, c := range first {
		require.Equal(t, first[0].Header.Get("webhook-id"), c.Header.Get("webhook-id"))
	}
	dels, err := b.st.Deliveries(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, store.DeliveryFailed, dels[0].Outcome)
	atts, err := b.st.DeliveryAttempts(t.Context(), dels[0].ID)
	require.NoError(t, err)
	require.Len(t, atts, 4)
	for _, a := range atts {
		require.Equal(t, 500, a.StatusCode)
		require.Contains(t, a.Error, "500")
	}

	rc.setAnswer(nil)
	out, errOut, code := intakectl(t, b, "redeliver", d.LogID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, d.LogID)
	b.waitState(d.LogID, document.StateFinishedSuccess, 20*time.Second)
	all := rc.snapshot()
	require.Len(t, all, 5)
	last := all[4]
	require.NotEqual(t, first[0].Header.Get("webhook-id"), last.Header.Get("webhook-id"), "a redelivery is a new delivery")
	require.JSONEq(t, string(first[0].Body), string(last.Body), "same body")
	verifySignature(t, last)

	out, errOut, code = intakectl(t, b, "deliveries", d.LogID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "finished_success")
	require.Contains(t, out, "redelivery of "+first[0].Header.Get("webhook-id"))
	require.Equal(t, 5, strings.Count(out, "\n  ")-2, "a header per delivery plus one line per attempt:\n%s", out)
}

// 410 disables the client's endpoint; the delivery waits until an operator
// enables it again, then completes.
func TestGoneDisablesEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rc := newReceiver(t)
	rc.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ call) { w.WriteHeader(http.StatusGone) })
	b.client("acme", rc.URL)
	b.start(fastTuning)

	d := b.document("acme", "quiet", document.StateProcessedRejected, document.ReasonVATIDMissing)
	waitFor(t, 20*time.Second, func() error {
		c, err := b.st.Client(t.Context(), "acme")
		if err != nil || c.WebhookEnabled {
			return errorf("client still enabled (%v)", err)
		}
		return nil
	})
	require.Equal(t, 1.0, b.metric("docintake_dispatcher_endpoint_disabled_total"))
	require.Zero(t, leasedSlots(t, b, "acme"), "the 410's record released the slot")
	waitFor(t, 5*time.Second, func() error {
		if v := b.metric("docintake_dispatcher_disabled_endpoints"); v != 1 {
			return errorf("disabled endpoints gauge %v", v)
		}
		return nil
	})
	// A second outcome while disabled is parked too, without a call.
	d2 := b.document("acme", "quiet", document.StateProcessedRejected, document.ReasonVATIDMissing)
	waitFor(t, 10*time.Second, func() error {
		dels, err := b.st.Deliveries(t.Context(), d2.ID)
		if err != nil || len(dels) != 1 || dels[0].LastError != "endpoint disabled" {
			return errorf("second delivery not parked: %+v %v", dels, err)
		}
		return nil
	})
	// The 410 was answered to d's delivery only (a copy of its job may
	// have been attempted twice: at-least-once, the same webhook-id); d2
	// was parked without a call.
	require.Empty(t, callsFor(rc.snapshot(), d2.LogID))
	requireOneWebhookID(t, callsFor(rc.snapshot(), d.LogID))
	cur, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedRejected, cur.State, "waiting, not failed")

	rc.setAnswer(nil)
	_, errOut, code := intakectl(t, b, "clients", "enable", "acme")
	require.Equal(t, 0, code, errOut)
	b.waitState(d.LogID, document.StateFinishedRejected, 20*time.Second)
	b.waitState(d2.LogID, document.StateFinishedRejected, 20*time.Second)
	require.GreaterOrEqual(t, len(callsFor(rc.snapshot(), d.LogID)), 2, "d redelivered after the enable")
	require.NotEmpty(t, callsFor(rc.snapshot(), d2.LogID))
	requireOneWebhookID(t, callsFor(rc.snapshot(), d2.LogID))
}

// requireOneWebhookID asserts that calls (of one delivery) carry a single
// webhook-id: repeats are the same message, as at-least-once promises.
func requireOneWebhookID(t *testing.T, calls []call) {
	t.Helper()
	require.NotEmpty(t, calls)
	for _, c := range calls {
		require.Equal(t, calls[0].Header.Get("webhook-id"), c.Header.Get("webhook-id"))
	}
}

// 429 with Retry-After is honoured: the retry comes after the client's delay,
// not the (here one hour long) schedule.
func TestTooManyRequestsRetryAfter(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_RETRY_SCHEDULE": "1h"})
	rc := newReceiver(t)
	rc.setAnswer(func(w http.ResponseWriter, _ *http.Request, _ call) {
		rc.setAnswer(nil) // only the first call is turned away
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	b.client("acme", rc.URL)
	b.start(fastTuning)

	d := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	b.waitState(d.LogID, document.StateFinishedSuccess, 20*time.Second)
	calls := rc.snapshot()
	require.Len(t, calls, 2)
	require.GreaterOrEqual(t, calls[1].At.Sub(calls[0].At), 900*time.Millisecond, "not before Retry-After")
	require.Equal(t, calls[0].Header.Get("webhook-id"), calls[1].Header.Get("webhook-id"))
}

// Whether an ignored document is reported is asked of the template version
// its attempt was processed with: a push after processing (here v2, which
// wants no feedback) does not silence the webhook v1 promised.
func TestIgnoredFeedbackFollowsPinnedVersion(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	rc := newReceiver(t)
	b.client("acme", rc.URL+"/hook")
	b.start(fastTuning)
	ctx := t.Context()
	d := b.documentWith("acme", "feedback", document.StateProcessedIgnored, "", func(d document.Document) {
		// Pinned as the processor pins: the served version, v1.
		v1, _, err := b.tm.PinAttempt(ctx, d, 1, "processor")
		require.NoError(t, err)
		require.True(t, v1.Template.DocIntake.IgnoredFeedback)
		old, err := b.st.TemplateVersion(ctx, "", "feedback", v1.Number)
		require.NoError(t, err)
		quiet := strings.Replace(string(old.Content), "ignored_feedback: true", "ignored_feedback: false", 1)
		require.NotEqual(t, string(old.Content), quiet)
		_, err = b.st.PushTemplate(ctx, store.TemplatePush{Name: "feedback", Filename: "feedback.yml", Content: []byte(quiet)})
		require.NoError(t, err)
		waitFor(t, 10*time.Second, func() error {
			if cur, ok := b.tm.Current("acme", "feedback"); !ok || cur.Template.DocIntake.IgnoredFeedback {
				return errorf("v2 not served yet")
			}
			return nil
		})
	})
	b.waitState(d.LogID, document.StateFinishedIgnored, 20*time.Second)
	waitFor(t, 10*time.Second, func() error {
		if n := len(callsFor(rc.snapshot(), d.LogID)); n != 1 {
			return errorf("%d webhook calls for the ignored document, want 1", n)
		}
		return nil
	})
}
