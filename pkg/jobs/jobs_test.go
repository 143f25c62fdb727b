package jobs_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/stretchr/testify/require"
)

func TestProcessRoundTrip(t *testing.T) {
	t.Parallel()
	d := document.Document{ID: "id-1", LogID: "log-1", ClientID: "acme"}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := jobs.Process("intake", d, 2, now)
	require.Equal(t, "intake.process.acme", m.Subject)
	require.Equal(t, "log-1:process:2", m.MsgID)
	require.Equal(t, m, jobs.Process("intake", d, 2, now), "deterministic, so retried publishes dedupe")
	j, err := jobs.ParseProcess(m.Payload)
	require.NoError(t, err)
	require.Equal(t, "log-1", j.GetLogId())
	require.Equal(t, "id-1", j.GetDocumentId())
	require.EqualValues(t, 2, j.GetAttempt())
	require.True(t, now.Equal(j.GetEnqueuedAt().AsTime()))
	_, err = jobs.ParseProcess([]byte("garbage\xff"))
	require.Error(t, err)
}

func TestDeliver(t *testing.T) {
	t.Parallel()
	d := document.Document{ID: "id-1", LogID: "log-1", ClientID: "acme", State: document.StateProcessedRejected}
	m := jobs.Deliver("intake", d, "msg_abc", time.Now())
	require.Equal(t, "intake.deliver.acme", m.Subject)
	j, err := jobs.ParseDeliver(m.Payload)
	require.NoError(t, err)
	require.Equal(t, "rejected", j.GetStatus())
	require.Equal(t, "msg_abc", j.GetDeliveryId())
}

// The dedup id formats are stored in outbox rows and compared by the
// stream within its duplicates window: a change would let a job through
// twice. Expected values are written from the documented formats
// (DESIGN.md: "<log_id>:process:<n>"; the outbox's deliver job
// "deliver:<delivery_id>"; the dispatcher's republish
// "deliver:<delivery_id>:<claim>").
func TestMsgIDFormats(t *testing.T) {
	t.Parallel()
	require.Equal(t, "DI-20260102-7:process:3", jobs.ProcessMsgID("DI-20260102-7", 3))
	require.Equal(t, "deliver:msg_42", jobs.DeliverMsgID("msg_42"))
	require.Equal(t, "deliver:msg_42:5", jobs.RepublishMsgID("msg_42", 5))

	logID, ok := jobs.ProcessMsgLogID("DI-20260102-7:process:3")
	require.True(t, ok)
	require.Equal(t, "DI-20260102-7", logID)
	_, ok = jobs.ProcessMsgLogID("deliver:msg_42")
	require.False(t, ok)

	d := document.Document{ID: "id-1", LogID: "DI-20260102-7", ClientID: "acme", State: document.StateProcessedSuccess}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	require.Equal(t, "DI-20260102-7:process:1", jobs.Process("intake", d, 1, now).MsgID)
	require.Equal(t, "deliver:msg_42", jobs.Deliver("intake", d, "msg_42", now).MsgID)
	dv := jobs.Delivery{ID: "msg_42", LogID: d.LogID, DocumentID: d.ID, ClientID: "acme",
		State: document.StateProcessedSuccess, Status: document.StatusSuccess}
	require.Equal(t, "deliver:msg_42:5", jobs.Republish("intake", dv, 5, now).MsgID)
}

// Subjects: <prefix>.<kind>.<client_id>, filters <prefix>.<kind>.> (README).
func TestSubjects(t *testing.T) {
	t.Parallel()
	require.Equal(t, "intake", jobs.DefaultSubjectPrefix)
	require.Equal(t, "intake.process.acme", jobs.ProcessSubject("intake", "acme"))
	require.Equal(t, "intake.deliver.acme", jobs.DeliverSubject("intake", "acme"))
	require.Equal(t, "t1.process.>", jobs.ProcessFilter("t1"))
	require.Equal(t, "t1.deliver.>", jobs.DeliverFilter("t1"))
}

// A republished job is the delivery's, at its claim: the dispatcher drops
// copies of older claims by the attempt.
func TestRepublish(t *testing.T) {
	t.Parallel()
	dv := jobs.Delivery{ID: "msg_42", LogID: "log-1", DocumentID: "id-1", ClientID: "acme",
		State: document.StateDeferredForRetry, Status: document.StatusDeferredForRetry}
	m := jobs.Republish("intake", dv, 7, time.Now())
	require.Equal(t, "intake.deliver.acme", m.Subject)
	j, err := jobs.ParseDeliver(m.Payload)
	require.NoError(t, err)
	require.Equal(t, "msg_42", j.GetDeliveryId())
	require.Equal(t, "deferred_for_retry", j.GetState())
	require.Equal(t, "deferred_for_retry", j.GetStatus())
	require.EqualValues(t, 7, j.GetAttempt())
	require.Equal(t, "id-1", j.GetDocumentId())
}
