package ingest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// An upload's trace context travels with its job: request traceparent →
// outbox row → relay → NATS message headers, where the processor picks it
// up (observability.StartJobSpan). Tracing export is off here, the default:
// propagation must work anyway.
func TestTraceContextReachesTheJob(t *testing.T) {
	t.Parallel()
	o := setupOps(t, "")
	b := &bundle{url: o.url, router: openAPIRouter(t)}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req := b.multipart(t, "tok-acme", form{file: []byte("%PDF-1.4\n%%EOF\n"),
		fields: [][2]string{{"message_id", "m-trace"}, {"subject", "PO"}, {"template", "contoso-po"}}})
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	res := b.do(t, req)
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.raw)

	relay := queue.NewRelay(o.st, queue.NewPublisher(o.js, o.qcfg.Stream), zaptest.NewLogger(t), queue.RelayOptions{})
	n, err := relay.Flush(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n)

	cons, err := o.js.Consumer(t.Context(), o.qcfg.Stream, o.qcfg.Processor.Durable)
	require.NoError(t, err)
	msg, err := cons.Next()
	require.NoError(t, err)
	require.NoError(t, msg.Ack())
	tp := msg.Headers().Get("traceparent")
	require.Regexp(t, `^00-`+traceID+`-[0-9a-f]{16}-01$`, tp, "the job continues the client's trace")

	// Without a trace context, the job has no trace headers.
	res = b.do(t, b.multipart(t, "tok-acme", form{file: []byte("%PDF-1.4\n%%EOF\n"),
		fields: [][2]string{{"message_id", "m-notrace"}, {"subject", "PO"}, {"template", "contoso-po"}}}))
	require.Equal(t, http.StatusAccepted, res.status)
	_, err = relay.Flush(t.Context())
	require.NoError(t, err)
	msg, err = cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	require.NoError(t, err)
	require.Empty(t, msg.Headers().Get("traceparent"))
}
