package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
)

// memOutbox is an in-memory OutboxSource with the contract of the store's:
// rows in id order, publish before delete, rows whose publish failed are given
// back.
type memOutbox struct {
	mu      sync.Mutex
	rows    []queue.OutboxMessage
	created map[int64]time.Time
	sent    map[int64]bool // published and deleted
	calls   chan int       // receives each claim's limit
	deletes chan []int64   // receives each DeleteOutbox's ids

	// FailDeletesFunc, when set, is asked after each batch was published
	// whether deleting it fails (the relay "dies" before commit).
	FailDeletesFunc func() bool
	// ErrFunc, when set, makes RelayOutbox fail before claiming rows.
	ErrFunc func() error
}

func newMemOutbox() *memOutbox {
	return &memOutbox{sent: map[int64]bool{}, created: map[int64]time.Time{}, calls: make(chan int, 1000),
		deletes: make(chan []int64, 1000)}
}

// add commits a row and returns it with its id.
func (m *memOutbox) add(subject, msgID, payload string) queue.OutboxMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := queue.OutboxMessage{ID: int64(len(m.rows) + 1), Subject: subject, MsgID: msgID, Payload: []byte(payload)}
	m.rows = append(m.rows, r)
	m.created[r.ID] = time.Now()
	return r
}

// addAged commits a row that has been waiting for age.
func (m *memOutbox) addAged(subject, msgID string, age time.Duration) queue.OutboxMessage {
	r := m.add(subject, msgID, "")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.created[r.ID] = time.Now().Add(-age)
	return r
}

func (m *memOutbox) isSent(id int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent[id]
}

func (m *memOutbox) DeleteOutbox(_ context.Context, ids []int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		m.sent[id] = true
	}
	m.deletes <- ids
	return nil
}

func (m *memOutbox) unsent() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rows) - len(m.sent)
}

func (m *memOutbox) RelayOutbox(ctx context.Context, limit int, minAge time.Duration, publish func(context.Context, []queue.OutboxMessage) []error) (int, error) {
	m.mu.Lock() // stands in for the row locks of FOR UPDATE
	defer m.mu.Unlock()
	m.calls <- limit
	if m.ErrFunc != nil {
		if err := m.ErrFunc(); err != nil {
			return 0, err
		}
	}
	var claimed []queue.OutboxMessage
	for _, r := range m.rows {
		if !m.sent[r.ID] && len(claimed) < limit && time.Since(m.created[r.ID]) >= minAge {
			claimed = append(claimed, r)
		}
	}
	var published []int64
	var perr error
	errs := publish(ctx, claimed)
	for i, r := range claimed {
		if i < len(errs) && errs[i] != nil {
			if perr == nil {
				perr = errs[i]
			}
			continue
		}
		published = append(published, r.ID)
	}
	if m.FailDeletesFunc != nil && m.FailDeletesFunc() {
		return 0, errors.New("delete published: connection reset") // rolled back
	}
	for _, id := range published {
		m.sent[id] = true
	}
	return len(published), perr
}

// fakePublisher records publishes; PublishFunc may fail them.
type fakePublisher struct {
	mu          sync.Mutex
	got         []string // msg ids in publish order
	published   chan string
	PublishFunc func(msgID string) error
}

func newFakePublisher() *fakePublisher { return &fakePublisher{published: make(chan string, 1000)} }

func (p *fakePublisher) PublishBatch(_ context.Context, msgs []queue.OutboxMessage) []error {
	var errs []error
	for i, m := range msgs {
		if p.PublishFunc != nil {
			if err := p.PublishFunc(m.MsgID); err != nil {
				if errs == nil {
					errs = make([]error, len(msgs))
				}
				errs[i] = err
				continue
			}
		}
		p.mu.Lock()
		p.got = append(p.got, m.MsgID)
		p.mu.Unlock()
		p.published <- m.MsgID
	}
	return errs
}

func (p *fakePublisher) ids() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// runRelay runs r until the test ends.
func runRelay(t *testing.T, r *queue.Relay) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, recv(t, done), "Run returns nil on shutdown")
	})
}

func TestRelayFlushBatches(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	var want []string
	for i := range 250 {
		id := testMsgID(fmt.Sprintf("L%03d", i), 1)
		src.add("intake.process.acme", id, "")
		want = append(want, id)
	}
	r := queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{BatchSize: 100})
	n, err := r.Flush(t.Context())
	require.NoError(t, err)
	require.Equal(t, 250, n)
	require.Equal(t, want, pub.ids(), "published once each, in outbox order")
	require.Len(t, src.calls, 3, "batches of 100, 100, 50")
	require.Zero(t, src.unsent())

	n, err = r.Flush(t.Context())
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestRelayPublishErrorGivesBackFailedRows(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	for i := range 5 {
		src.add("s", fmt.Sprintf("m%d", i), "")
	}
	broken := true
	pub.PublishFunc = func(id string) error {
		if broken && id == "m2" {
			return errors.New("nats: timeout")
		}
		return nil
	}
	r := queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{})
	n, err := r.Flush(t.Context())
	require.ErrorContains(t, err, "timeout")
	require.Equal(t, 4, n, "the published rows are deleted")
	require.Equal(t, 1, src.unsent(), "the failed one is given back")

	broken = false
	n, err = r.Flush(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"m0", "m1", "m3", "m4", "m2"}, pub.ids())
}

// TestRelayRunPolls: the poll claims rows nobody handed over once they are
// ClaimAge old, and leaves younger ones to the relay of the process that
// wrote them.
func TestRelayRunPolls(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	r := queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{PollInterval: 10 * time.Millisecond, ClaimAge: time.Minute})
	runRelay(t, r)
	recv(t, src.calls)
	young := src.add("s", "young", "")
	src.addAged("s", "committed-elsewhere", 2*time.Minute) // its process died before publishing it
	require.Equal(t, "committed-elsewhere", recv(t, pub.published))
	for range 3 {
		recv(t, src.calls) // later polls
	}
	require.False(t, src.isSent(young.ID), "a row younger than ClaimAge is left alone")
	require.Equal(t, []string{"committed-elsewhere"}, pub.ids())
}

// TestRelayHandoff: rows handed over are published at once, without a
// claim, and deleted together afterwards with one DeleteOutbox.
func TestRelayHandoff(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	reg := prometheus.NewRegistry()
	r := queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{PollInterval: time.Hour,
		DeleteDelay: 20 * time.Millisecond, Registry: reg})
	runRelay(t, r)
	recv(t, src.calls) // the start-up pass

	a, b := src.add("s", "a", "1"), src.add("s", "b", "2")
	r.Handoff([]queue.OutboxMessage{a, b})
	require.Equal(t, "a", recv(t, pub.published))
	require.Equal(t, "b", recv(t, pub.published))
	require.Equal(t, []int64{a.ID, b.ID}, recv(t, src.deletes), "one deletion for both")
	c := src.add("s", "c", "3")
	r.Handoff([]queue.OutboxMessage{c})
	require.Equal(t, "c", recv(t, pub.published))
	require.Equal(t, []int64{c.ID}, recv(t, src.deletes))
	require.Empty(t, src.calls, "nothing was claimed from the table")
	require.Zero(t, src.unsent())
	require.Equal(t, 3.0, counterValue(t, reg, "docintake_outbox_relayed_total"))
}

// TestRelayHandoffDeletesFullBatchAtOnce: a full batch of published rows
// is deleted without waiting for DeleteDelay.
func TestRelayHandoffDeletesFullBatchAtOnce(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	r := queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{PollInterval: time.Hour, DeleteDelay: time.Hour, BatchSize: 2})
	runRelay(t, r)
	recv(t, src.calls)
	a, b := src.add("s", "a", ""), src.add("s", "b", "")
	r.Handoff([]queue.OutboxMessage{a, b})
	require.Equal(t, []int64{a.ID, b.ID}, recv(t, src.deletes))
}

// TestRelayHandoffPublishFailure: a handed row whose publish fails stays
// in the table, and the poll publishes it once it is ClaimAge old.
func TestRelayHandoffPublishFailure(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	var mu sync.Mutex
	down := true
	pub.PublishFunc = func(string) error {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return errors.New("nats: no responders")
		}
		return nil
	}
	r := queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{PollInterval: 10 * time.Millisecond,
		ClaimAge: 50 * time.Millisecond, DeleteDelay: time.Millisecond})
	runRelay(t, r)
	recv(t, src.calls)
	m := src.add("s", "m", "")
	r.Handoff([]queue.OutboxMessage{m})
	recv(t, src.calls) // a poll after the failed publish
	require.False(t, src.isSent(m.ID), "not deleted: its publish failed")
	mu.Lock()
	down = false
	mu.Unlock()
	require.Equal(t, "m", recv(t, pub.published), "the poll publishes it")
	require.Eventually(t, func() bool { return src.isSent(m.ID) }, 10*time.Second, time.Millisecond)
	// Claimed and deleted by the poll's own statement: the hand-over kept no
	// copy to retry and delete later (that would go through DeleteOutbox).
	require.Empty(t, src.deletes, "no hand-over deletion")
	require.Empty(t, pub.published, "published once")
}

func TestRelayRunRetriesAfterFailure(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	src.add("s", "m1", "")
	failures := 2
	src.ErrFunc = func() error {
		if failures > 0 {
			failures--
			return errors.New("database is down")
		}
		return nil
	}
	core, logs := observer.New(zap.WarnLevel)
	r := queue.NewRelay(src, pub, zap.New(core), queue.RelayOptions{PollInterval: 10 * time.Millisecond})
	runRelay(t, r)
	require.Equal(t, "m1", recv(t, pub.published))
	require.Equal(t, 2, logs.FilterMessage("outbox relay failed, retrying").Len())
}

func TestNewRelayNilDependencies(t *testing.T) {
	t.Parallel()
	require.Panics(t, func() { queue.NewRelay(nil, newFakePublisher(), zap.NewNop(), queue.RelayOptions{}) })
	require.Panics(t, func() { queue.NewRelay(newMemOutbox(), nil, zap.NewNop(), queue.RelayOptions{}) })
	require.Panics(t, func() { queue.NewRelay(newMemOutbox(), newFakePublisher(), nil, queue.RelayOptions{}) })
}

// TestRelayKilledBetweenPublishAndDelete publishes to real JetStream, loses
// the deletion of the first batch's published rows (the relay dies before
// its commit), and relays again: the stream holds each job exactly once.
func TestRelayKilledBetweenPublishAndDelete(t *testing.T) {
	t.Parallel()
	js := queuetest.JetStream(t)
	cfg := queuetest.Ensure(t, js, nil)
	src := newMemOutbox()
	for i := range 3 {
		logID := fmt.Sprintf("L%d", i)
		src.add(cfg.ProcessSubject("acme"), testMsgID(logID, 1), logID)
	}
	crashes := 1
	src.FailDeletesFunc = func() bool {
		crashes--
		return crashes >= 0
	}
	r := queue.NewRelay(src, queue.NewPublisher(js, cfg.Stream), zaptest.NewLogger(t), queue.RelayOptions{})

	_, err := r.Flush(t.Context())
	require.Error(t, err, "first relay dies after publishing")
	require.Equal(t, 3, src.unsent(), "nothing was deleted")
	n, err := streamMsgs(t.Context(), js, cfg.Stream)
	require.NoError(t, err)
	require.EqualValues(t, 3, n, "but all three were published")

	published, err := r.Flush(t.Context()) // the restarted relay
	require.NoError(t, err)
	require.Equal(t, 3, published)
	require.Zero(t, src.unsent())
	n, err = streamMsgs(t.Context(), js, cfg.Stream)
	require.NoError(t, err)
	require.EqualValues(t, 3, n, "republished jobs were deduplicated")

	cons, err := js.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	batch, err := cons.FetchNoWait(10)
	require.NoError(t, err)
	var payloads []string
	for m := range batch.Messages() {
		payloads = append(payloads, string(m.Data()))
		require.NoError(t, m.Ack())
	}
	require.Equal(t, []string{"L0", "L1", "L2"}, payloads)
}

// TestPublishBatch publishes a batch to real JetStream in one go: every
// message lands once and in order with its headers, a repeated dedup id is
// not stored twice, and a message no stream takes fails alone.
func TestPublishBatch(t *testing.T) {
	t.Parallel()
	js := queuetest.JetStream(t)
	cfg := queuetest.Ensure(t, js, nil)
	pub := queue.NewPublisher(js, cfg.Stream)
	subj := cfg.ProcessSubject("acme")
	batch := []queue.OutboxMessage{
		{Subject: subj, MsgID: testMsgID("L0", 1), Payload: []byte("L0"), Headers: map[string]string{"traceparent": "00-abc-def-01"}},
		{Subject: "nobody.listens.here", MsgID: "lost", Payload: []byte("x")},
		{Subject: subj, MsgID: testMsgID("L1", 1), Payload: []byte("L1")},
		{Subject: subj, MsgID: "", Payload: []byte("no id")},
		{Subject: subj, MsgID: testMsgID("L0", 1), Payload: []byte("L0")}, // a copy: dropped by the stream
		{Subject: subj, MsgID: testMsgID("L2", 1), Payload: []byte("L2")},
	}
	errs := pub.PublishBatch(t.Context(), batch)
	require.Len(t, errs, len(batch))
	for i, err := range errs {
		switch i {
		case 1:
			require.Error(t, err, "no stream takes the subject")
		case 3:
			require.ErrorIs(t, err, queue.ErrEmptyMsgID)
		default:
			require.NoError(t, err, "message %d", i)
		}
	}
	require.Nil(t, pub.PublishBatch(t.Context(), batch[2:3]), "all published: nil")

	cons, err := js.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	msgs, err := cons.FetchNoWait(10)
	require.NoError(t, err)
	var payloads []string
	var trace string
	for m := range msgs.Messages() {
		payloads = append(payloads, string(m.Data()))
		if string(m.Data()) == "L0" {
			trace = m.Headers().Get("traceparent")
		}
		require.NoError(t, m.Ack())
	}
	require.Equal(t, []string{"L0", "L1", "L2"}, payloads)
	require.Equal(t, "00-abc-def-01", trace)
}

// TestRelayServe runs work beside the relay: rows committed while work runs
// are relayed when handed over, the relay outlives work, and rows committed in
// work's last moments are published by the final flush. The relay gauge
// shows one relay while it runs.
func TestRelayServe(t *testing.T) {
	t.Parallel()
	src, pub := newMemOutbox(), newFakePublisher()
	reg := prometheus.NewRegistry()
	r := queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{PollInterval: time.Hour, Registry: reg})
	// A second relay in the same registry shares the gauge (and would show
	// up as 2 while running).
	queue.NewRelay(src, pub, zaptest.NewLogger(t), queue.RelayOptions{Registry: reg})
	gauge := func() float64 {
		fams, err := reg.Gather()
		require.NoError(t, err)
		for _, f := range fams {
			if f.GetName() == "docintake_outbox_relays" {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no docintake_outbox_relays metric")
		return 0
	}
	ctx, cancel := context.WithCancel(t.Context())
	err := r.Serve(ctx, 5*time.Second, func(ctx context.Context) error {
		recv(t, src.calls) // the relay's first pass
		require.Equal(t, 1.0, gauge())
		r.Handoff([]queue.OutboxMessage{src.add("s", "during", "")})
		require.Equal(t, "during", recv(t, pub.published))
		cancel() // the process is told to stop; its services drain
		<-ctx.Done()
		src.add("s", "last", "") // committed while draining, not handed over
		r.Handoff([]queue.OutboxMessage{src.add("s", "last-handed", "")})
		return errors.New("work failed")
	})
	require.EqualError(t, err, "work failed", "work's error is returned")
	require.ElementsMatch(t, []string{"last", "last-handed"}, []string{recv(t, pub.published), recv(t, pub.published)},
		"the final flush published them")
	require.Zero(t, src.unsent(), "and deleted them")
	require.Equal(t, 0.0, gauge(), "the relay has stopped")
}

// counterValue reads a counter without labels from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
