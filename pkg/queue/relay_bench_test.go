package queue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/nats-io/nats-server/v2/server"
)

// sequentialPublisher publishes a batch the way the relay did before
// PublishBatch: one synchronous publish per message, each waiting for its
// ack. It is the baseline of BenchmarkRelay.
type sequentialPublisher struct{ *queue.Publisher }

func (p sequentialPublisher) PublishBatch(ctx context.Context, msgs []queue.OutboxMessage) []error {
	for i, m := range msgs {
		if err := p.PublishWithHeaders(ctx, m.Subject, m.MsgID, m.Payload, m.Headers); err != nil {
			errs := make([]error, len(msgs))
			for j := i; j < len(msgs); j++ {
				errs[j] = err // the rest of the batch is given back
			}
			return errs
		}
	}
	return nil
}

// BenchmarkRelay relays b.N outbox rows from PostgreSQL to an embedded
// JetStream server (synced on every write or not), with batches
// published asynchronously ("async", what the relay does) or one
// synchronous publish per row ("sequential", the baseline). It reports the
// process's CPU per relayed row and rows per second.
//
//	cd pkg && go test -run '^$' -bench BenchmarkRelay -benchtime 5000x ./queue/
func BenchmarkRelay(b *testing.B) {
	if testing.Short() {
		b.Skip("needs PostgreSQL")
	}
	st := storetest.Store(b)
	for _, srv := range []struct {
		name string
		sync bool
	}{{"synced", true}, {"unsynced", false}} {
		b.Run(srv.name, func(b *testing.B) { benchRelay(b, st, srv.sync) })
	}
}

// benchRelay runs the relay variants against one JetStream server; synced
// fsyncs every write (standalone, queuetest), unsynced is nats-server's
// default (a sync every two minutes, replicas for durability).
func benchRelay(b *testing.B, st *store.Store, synced bool) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: b.TempDir(), SyncAlways: synced, NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	ns.Start()
	b.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats-server not ready")
	}
	_, js := queuetest.Connect(b, ns.ClientURL())
	cfg := queuetest.Ensure(b, js, nil)
	pub := queue.NewPublisher(js, cfg.Stream)
	insert := func(ctx context.Context, prefix string, n int) {
		// A process job's payload is a few dozen bytes of protobuf.
		_, err := st.Pool().Exec(ctx, `INSERT INTO outbox (subject, msg_id, payload)
			SELECT $1, $2 || g, decode(repeat('ab', 60), 'hex') FROM generate_series(1, $3) g`,
			cfg.ProcessSubject("acme"), prefix, n)
		if err != nil {
			b.Fatal(err)
		}
	}
	// Warm up both paths (connections, prepared statements, the stream's
	// first block) so that neither variant pays for it.
	for i, p := range []queue.BatchPublisher{sequentialPublisher{pub}, pub} {
		insert(b.Context(), fmt.Sprintf("warm-%d-", i), 500)
		if _, err := queue.NewRelay(st, p, zap.NewNop(), queue.RelayOptions{}).Flush(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		pub  queue.BatchPublisher
	}{
		{"sequential", sequentialPublisher{pub}},
		{"async", pub},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := b.Context()
			insert(ctx, fmt.Sprintf("%s-%d-%d-", bc.name, b.N, time.Now().UnixNano()), b.N)
			r := queue.NewRelay(st, bc.pub, zap.NewNop(), queue.RelayOptions{})
			// The relay's and the embedded JetStream server's CPU, not
			// PostgreSQL's.
			cpu0, t0 := repotest.ProcessCPU(b), time.Now()
			b.ResetTimer()
			n, err := r.Flush(ctx)
			b.StopTimer()
			cpu, wall := repotest.ProcessCPU(b)-cpu0, time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if n != b.N {
				b.Fatalf("relayed %d rows, want %d", n, b.N)
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-µs/msg")
			b.ReportMetric(float64(n)/wall.Seconds(), "msgs/s")
		})
	}
}
