package dispatcher_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
)

// TestDeliveryThroughput is the benchmark of BENCHMARKS.md, not a test: it
// runs only with DISPATCHER_BENCH=<documents>. It commits that many
// processed_success documents (result XML in S3, deliver job in the outbox),
// then starts DISPATCHER_BENCH_PROCS (default 1) dispatcher processes and
// measures how long until every document is finished_success at a local
// receiver answering 204.
//
//	DISPATCHER_BENCH=2000 DISPATCHER_BENCH_PROCS=2 go test -run TestDeliveryThroughput -v .
func TestDeliveryThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("DISPATCHER_BENCH"))
	if n <= 0 {
		t.Skip("benchmark: set DISPATCHER_BENCH=<documents> (and DISPATCHER_BENCH_PROCS)")
	}
	procs, _ := strconv.Atoi(os.Getenv("DISPATCHER_BENCH_PROCS"))
	procs = max(procs, 1)
	bin := dispatcherBinary(t)
	// Production concurrency: 16 workers, 4 per client, 4 clients.
	b := setup(t, map[string]string{"INTAKE_LOG_LEVEL": "warn", "INTAKE_DISPATCHER_CONCURRENCY": "16",
		"INTAKE_WEBHOOK_CLIENT_CONCURRENCY": "4"})
	rc := newReceiver(t)
	clients := []string{"acme", "globex", "initech", "umbrella"}
	for _, c := range clients {
		b.client(c, rc.URL)
	}
	for i := range n {
		b.document(clients[i%len(clients)], "quiet", document.StateProcessedSuccess, "")
	}
	start := time.Now()
	for range procs {
		b.startProcess(bin)
	}
	waitFor(t, 10*time.Minute, func() error {
		var left int
		err := b.st.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM documents WHERE state <> 'finished_success'`).Scan(&left)
		if err != nil {
			return err
		}
		if left > 0 {
			return fmt.Errorf("%d documents not finished", left)
		}
		return nil
	})
	el := time.Since(start)
	calls := len(rc.snapshot())
	t.Logf("BENCH procs=%d documents=%d calls=%d elapsed=%s deliveries/s=%.0f (incl. process start)",
		procs, n, calls, el.Round(time.Millisecond), float64(n)/el.Seconds())
}
