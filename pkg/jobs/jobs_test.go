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
