package dispatcher_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
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

// leasedSlots counts client's slots whose lease has not ended.
func leasedSlots(t *testing.T, b *bundle, client string) int {
	t.Helper()
	var n int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM webhook_slots WHERE client_id = $1 AND leased_until > now()`,
		client).Scan(&n))
	return n
}

// A client whose slots a killed replica still holds is busy for every
// dispatcher although none of its calls runs in this process: the job
// bounces without claiming the delivery (no attempt counted, no call), and
// on the broker's last delivery it is handed to the scheduler, which
// republishes it. When the dead replica's leases end it is delivered.
func TestBusyClientBounces(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_CLIENT_CONCURRENCY": "2"})
	qc := b.qcfg
	qc.Dispatcher.MaxDeliver = 2
	qc.Dispatcher.BackOff = qc.Dispatcher.BackOff[:min(len(qc.Dispatcher.BackOff), 2)]
	require.NoError(t, queue.Ensure(t.Context(), b.js, qc))
	rc := newReceiver(t)
	b.client("acme", rc.URL)
	_, err := b.st.Pool().Exec(t.Context(), `INSERT INTO webhook_slots (client_id, slot, holder, leased_until)
		VALUES ('acme', 0, 'dead-replica', now() + interval '1 hour'), ('acme', 1, 'dead-replica', now() + interval '1 hour')`)
	require.NoError(t, err)
	b.start(fastTuning)

	d := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	waitFor(t, 20*time.Second, func() error {
		dels, err := b.st.Deliveries(t.Context(), d.ID)
		if err != nil || len(dels) != 1 || dels[0].Claim < 3 {
			return errorf("delivery not republished twice by the scheduler: %+v %v", dels, err)
		}
		return nil
	})
	dels, err := b.st.Deliveries(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, []any{store.DeliveryPending, 0}, []any{dels[0].Outcome, dels[0].Attempts}, "a busy client's delivery is not claimed")
	require.Empty(t, rc.snapshot())
	require.GreaterOrEqual(t, b.metric("docintake_dispatcher_client_busy_total"), 4.0, "two deliveries of each of two messages")
	require.Equal(t, 2, leasedSlots(t, b, "acme"), "a bounce leases nothing")

	_, err = b.st.Pool().Exec(t.Context(), `UPDATE webhook_slots SET leased_until = now() WHERE holder = 'dead-replica'`)
	require.NoError(t, err)
	b.waitState(d.LogID, document.StateFinishedSuccess, 20*time.Second)
	require.Len(t, rc.snapshot(), 1)
	require.Zero(t, leasedSlots(t, b, "acme"), "the record statement released the slot")
}

// A claimed delivery whose attempt cannot be made (here: its result object
// is gone, so no body can be built) is postponed without a call, and its
// slot is given back at once instead of blocking the client for a lease.
func TestSlotReleasedWithoutAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_CLIENT_CONCURRENCY": "1"})
	rc := newReceiver(t)
	b.client("acme", rc.URL)
	d := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	require.NoError(t, b.objs.Delete(t.Context(), d.ResultKey))
	b.start(fastTuning) // its relay publishes the job
	waitFor(t, 20*time.Second, func() error {
		dels, err := b.st.Deliveries(t.Context(), d.ID)
		if err != nil || len(dels) != 1 || dels[0].Attempts != 1 || dels[0].LastError == "" || dels[0].LeasedUntil != nil {
			return errorf("delivery not postponed: %+v %v", dels, err)
		}
		if n := leasedSlots(t, b, "acme"); n != 0 {
			return errorf("%d slots leased", n)
		}
		return nil
	})
	require.Empty(t, rc.snapshot())

	// The client is not blocked: its next document goes out.
	d2 := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	b.waitState(d2.LogID, document.StateFinishedSuccess, 20*time.Second)
}

// When the attempt's record fails (here: the delivery row vanished while
// the call was in flight, so the statement writes nothing), the slot is
// still given back at once, not after its lease.
func TestSlotReleasedWhenRecordFails(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_TIMEOUT": "30s", "INTAKE_WEBHOOK_CLIENT_CONCURRENCY": "1"})
	slow := newHanging(t)
	b.client("acme", slow.URL)
	b.start(fastTuning)

	d := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	waitFor(t, 20*time.Second, func() error {
		if n := slow.inFlight.Load(); n != 1 {
			return errorf("%d calls in flight", n)
		}
		return nil
	})
	require.Equal(t, 1, leasedSlots(t, b, "acme"))
	_, err := b.st.Pool().Exec(t.Context(), `DELETE FROM deliveries WHERE document_id = $1`, d.ID)
	require.NoError(t, err)
	slow.open()
	waitFor(t, 10*time.Second, func() error {
		if n := leasedSlots(t, b, "acme"); n != 0 {
			return errorf("%d slots leased", n)
		}
		return nil
	})
}
