package dispatcher_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

// A receiver that fails half the calls with 500, lets a tenth time out and
// resets the connection on a twentieth: every outcome still arrives, every
// document ends finished_*, and all attempts of one delivery carry one
// webhook-id.
func TestUnreliableReceiver(t *testing.T) {
	t.Parallel()
	// 25 retries: a delivery fails for good only after 26 bad calls in a row
	// (0.65^26 ≈ 1e-5 per document).
	schedule := strings.TrimSuffix(strings.Repeat("10ms,", 25), ",")
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_RETRY_SCHEDULE": schedule, "INTAKE_WEBHOOK_TIMEOUT": "300ms"})
	rc := newReceiver(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var rngMu sync.Mutex
	var timeouts, resets, fails atomic.Int32
	rc.setAnswer(func(w http.ResponseWriter, r *http.Request, _ call) {
		rngMu.Lock()
		p := rng.Float64()
		rngMu.Unlock()
		switch {
		case p < 0.5:
			fails.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		case p < 0.6:
			timeouts.Add(1)
			<-r.Context().Done() // the dispatcher gives up and closes
		case p < 0.65:
			resets.Add(1)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	b.client("acme", rc.URL)
	b.start(fastTuning)

	var docs []doc
	for i := range 30 {
		switch i % 3 {
		case 0:
			docs = append(docs, b.document("acme", "quiet", document.StateProcessedSuccess, ""))
		case 1:
			docs = append(docs, b.document("acme", "quiet", document.StateProcessedRejected, document.ReasonCannotParseItems))
		default:
			docs = append(docs, b.document("acme", "feedback", document.StateProcessedIgnored, ""))
		}
	}
	want := map[document.State]document.State{
		document.StateProcessedSuccess:  document.StateFinishedSuccess,
		document.StateProcessedRejected: document.StateFinishedRejected,
		document.StateProcessedIgnored:  document.StateFinishedIgnored,
	}
	for _, d := range docs {
		b.waitState(d.LogID, want[d.State], 60*time.Second)
	}
	calls := rc.snapshot()
	for _, d := range docs {
		cs := callsFor(calls, d.LogID)
		require.NotEmpty(t, cs)
		for _, c := range cs {
			require.Equal(t, cs[0].Header.Get("webhook-id"), c.Header.Get("webhook-id"), "one webhook-id for all attempts of %s", d.LogID)
			verifySignature(t, c)
		}
		dels, err := b.st.Deliveries(context.Background(), d.ID)
		require.NoError(t, err)
		require.Len(t, dels, 1)
		atts, err := b.st.DeliveryAttempts(context.Background(), dels[0].ID)
		require.NoError(t, err)
		require.Len(t, atts, len(cs), "every call the receiver saw is a stored attempt (%s)", d.LogID)
	}
	t.Logf("%d calls for %d documents: %d 500s, %d timeouts, %d resets", len(calls), len(docs), fails.Load(), timeouts.Load(), resets.Load())
	require.Positive(t, fails.Load())
	require.Positive(t, timeouts.Load())
	require.Positive(t, resets.Load())
}

// A client whose endpoint hangs does not hold back another client: its calls
// never exceed the per-client limit, and the other client's documents finish
// while the slow client's calls are still stuck.
func TestSlowClientDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_TIMEOUT": "30s", "INTAKE_WEBHOOK_CLIENT_CONCURRENCY": "2",
		"INTAKE_DISPATCHER_CONCURRENCY": "4"})
	slow := newHanging(t)
	open, maxInFlight := slow.open, slow.maxInFlight
	fast := newReceiver(t)
	b.client("slow", slow.URL)
	b.client("fast", fast.URL)
	b.start(fastTuning)

	var slowDocs, fastDocs []doc
	for range 10 {
		slowDocs = append(slowDocs, b.document("slow", "quiet", document.StateProcessedSuccess, ""))
	}
	for range 6 {
		fastDocs = append(fastDocs, b.document("fast", "quiet", document.StateProcessedSuccess, ""))
	}
	for _, d := range fastDocs {
		b.waitState(d.LogID, document.StateFinishedSuccess, 20*time.Second)
	}
	require.Equal(t, int32(2), maxInFlight.Load(), "the slow client has exactly its two slots busy")
	cur, err := b.st.Document(context.Background(), slowDocs[0].ID)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, cur.State)

	open()
	for _, d := range slowDocs {
		b.waitState(d.LogID, document.StateFinishedSuccess, 30*time.Second)
	}
	require.LessOrEqual(t, maxInFlight.Load(), int32(2))
	require.Positive(t, b.metric("docintake_dispatcher_client_busy_total"))
}
