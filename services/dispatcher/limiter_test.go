package dispatcher_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// INTAKE_WEBHOOK_CLIENT_CONCURRENCY holds across dispatcher replicas: two
// dispatchers with two slots per client each call a hanging client twice at
// most in all, not four times. The check waits until two calls hang and both
// dispatchers have turned a job of that client away (had the limit been per
// process, each would first have filled its own two slots).
func TestClientConcurrencyAcrossDispatchers(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_TIMEOUT": "30s", "INTAKE_WEBHOOK_CLIENT_CONCURRENCY": "2",
		"INTAKE_DISPATCHER_CONCURRENCY": "4"})
	slow := newHanging(t)
	open, inFlight, maxInFlight := slow.open, slow.inFlight, slow.maxInFlight
	b.client("slow", slow.URL)
	var regs []*prometheus.Registry
	for range 2 {
		b.start(fastTuning)
		regs = append(regs, b.reg)
	}
	var docs []doc
	for range 12 {
		docs = append(docs, b.document("slow", "quiet", document.StateProcessedSuccess, ""))
	}
	waitFor(t, 30*time.Second, func() error {
		if n := inFlight.Load(); n < 2 {
			return errorf("%d calls in flight", n)
		}
		for i, reg := range regs {
			b.reg = reg
			if b.metric("docintake_dispatcher_client_busy_total") == 0 {
				return errorf("dispatcher %d has not turned a job away yet", i)
			}
		}
		return nil
	})
	require.Equal(t, int32(2), maxInFlight.Load(), "two calls in flight across both dispatchers")
	var leased int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM webhook_slots WHERE client_id = 'slow' AND leased_until > now()`).Scan(&leased))
	require.Equal(t, 2, leased)

	open()
	for _, d := range docs {
		b.waitState(d.LogID, document.StateFinishedSuccess, 30*time.Second)
	}
	require.Equal(t, int32(2), maxInFlight.Load())
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM webhook_slots WHERE client_id = 'slow'`).Scan(&leased))
	require.Zero(t, leased, "every slot is released")
}
