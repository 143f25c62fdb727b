package queue_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
)

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	cfg := queue.DefaultConfig()
	require.NoError(t, cfg.Validate())
	require.Equal(t, "INTAKE", cfg.Stream)
	require.Equal(t, "intake.process.acme", cfg.ProcessSubject("acme"))
	require.Equal(t, "intake.deliver.acme", cfg.DeliverSubject("acme"))
	require.Equal(t, "processor", cfg.Processor.Durable)
	require.Equal(t, "dispatcher", cfg.Dispatcher.Durable)
	require.Equal(t, 2*time.Minute, cfg.Duplicates)
	require.Equal(t, jetstream.FileStorage, cfg.Storage)
	require.Empty(t, cfg.Processor.BackOff, "no server backoff: it distorts nak delays")
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := map[string]func(c *queue.Config){
		"StreamWithDot":      func(c *queue.Config) { c.Stream = "IN.TAKE" },
		"PrefixWithWildcard": func(c *queue.Config) { c.SubjectPrefix = "in*" },
		"PrefixWithDot":      func(c *queue.Config) { c.SubjectPrefix = "a.b" },
		"NegativeDuplicates": func(c *queue.Config) { c.Duplicates = -time.Second },
		"SameDurables":       func(c *queue.Config) { c.Dispatcher.Durable = c.Processor.Durable },
		"BackOffNotAckWait":  func(c *queue.Config) { c.Processor.BackOff = []time.Duration{time.Second} },
		"BackOffTooLong": func(c *queue.Config) {
			c.Processor.MaxDeliver = 2
			c.Processor.BackOff = []time.Duration{c.Processor.AckWait, time.Minute, time.Hour}
		},
		"ZeroBackOffStep":     func(c *queue.Config) { c.Dispatcher.BackOff = []time.Duration{30 * time.Second, 0} },
		"NegativeAckPending":  func(c *queue.Config) { c.Processor.MaxAckPending = -1 },
		"DurableWithSpace":    func(c *queue.Config) { c.Processor.Durable = "pro cessor" },
		"NegativeMaxDelivery": func(c *queue.Config) { c.Dispatcher.MaxDeliver = -1 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := queue.DefaultConfig()
			mutate(&cfg)
			require.Error(t, cfg.Validate())
		})
	}
}

func TestEnsure(t *testing.T) {
	t.Parallel()
	js := queuetest.JetStream(t)
	cfg := queuetest.Config(t)
	cfg.Processor.MaxDeliver = 7
	cfg.Processor.AckWait = 20 * time.Second
	cfg.Processor.BackOff = []time.Duration{20 * time.Second, time.Minute}
	cfg.Dispatcher.MaxAckPending = 50
	cfg.Duplicates = 90 * time.Second
	cfg = queuetest.Ensure(t, js, &cfg)
	// Idempotent: a second start (or a second replica) changes nothing.
	require.NoError(t, queue.Ensure(t.Context(), js, cfg))

	s, err := js.Stream(t.Context(), cfg.Stream)
	require.NoError(t, err)
	sc := s.CachedInfo().Config
	require.Equal(t, jetstream.WorkQueuePolicy, sc.Retention)
	require.Equal(t, jetstream.FileStorage, sc.Storage)
	require.ElementsMatch(t, []string{cfg.SubjectPrefix + ".process.>", cfg.SubjectPrefix + ".deliver.>"}, sc.Subjects)
	require.Equal(t, 90*time.Second, sc.Duplicates)
	require.Equal(t, 1, sc.Replicas)

	c, err := js.Consumer(t.Context(), cfg.Stream, "processor")
	require.NoError(t, err)
	cc := c.CachedInfo().Config
	require.Equal(t, "processor", cc.Durable)
	require.Equal(t, cfg.SubjectPrefix+".process.>", cc.FilterSubject)
	require.Equal(t, jetstream.AckExplicitPolicy, cc.AckPolicy)
	require.Equal(t, 20*time.Second, cc.AckWait)
	require.Equal(t, 7, cc.MaxDeliver)
	require.Equal(t, []time.Duration{20 * time.Second, time.Minute}, cc.BackOff)
	require.Equal(t, 10000, cc.MaxAckPending)

	d, err := js.Consumer(t.Context(), cfg.Stream, "dispatcher")
	require.NoError(t, err)
	dc := d.CachedInfo().Config
	require.Equal(t, cfg.SubjectPrefix+".deliver.>", dc.FilterSubject)
	require.Equal(t, 50, dc.MaxAckPending)
	require.Equal(t, 10, dc.MaxDeliver)

	// Changing a consumer setting updates it in place.
	cfg.Processor.MaxDeliver = 8
	require.NoError(t, queue.Ensure(t.Context(), js, cfg))
	info, err := c.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, 8, info.Config.MaxDeliver)

	// A change the server cannot apply to an existing stream is reported.
	cfg.Storage = jetstream.MemoryStorage
	err = queue.Ensure(t.Context(), js, cfg)
	require.ErrorContains(t, err, cfg.Stream)

	// Invalid configuration is rejected before touching the server.
	bad := cfg
	bad.SubjectPrefix = "a.b"
	require.Error(t, queue.Ensure(t.Context(), js, bad))
}

func TestPublishDedup(t *testing.T) {
	t.Parallel()
	js := queuetest.JetStream(t)
	cfg := queuetest.Ensure(t, js, nil)
	pub := queue.NewPublisher(js, cfg.Stream)
	subj := cfg.ProcessSubject("acme")

	require.NoError(t, pub.Publish(t.Context(), subj, testMsgID("L1", 1), []byte("a")))
	require.NoError(t, pub.Publish(t.Context(), subj, testMsgID("L1", 1), []byte("a")), "a duplicate is acked, not an error")
	n, err := streamMsgs(t.Context(), js, cfg.Stream)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "same msg id twice: one message")

	require.NoError(t, pub.Publish(t.Context(), subj, testMsgID("L1", 2), []byte("a")))
	require.NoError(t, pub.Publish(t.Context(), cfg.DeliverSubject("acme"), "deliver:d1", []byte("b")))
	n, err = streamMsgs(t.Context(), js, cfg.Stream)
	require.NoError(t, err)
	require.EqualValues(t, 3, n)

	require.ErrorIs(t, pub.Publish(t.Context(), subj, "", []byte("x")), queue.ErrEmptyMsgID)
	require.Error(t, pub.Publish(t.Context(), "nobody.listens.here", "m1", []byte("x")), "no stream takes the subject")

	// A subject captured by another stream fails instead of going astray.
	other := queuetest.Ensure(t, js, nil)
	require.Error(t, pub.Publish(t.Context(), other.ProcessSubject("acme"), "m2", []byte("x")))
	n, err = streamMsgs(t.Context(), js, other.Stream)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestStats(t *testing.T) {
	t.Parallel()
	js := queuetest.JetStream(t)
	cfg := queuetest.Ensure(t, js, nil)
	pub := queue.NewPublisher(js, cfg.Stream)
	for i := range 3 {
		require.NoError(t, pub.Publish(t.Context(), cfg.ProcessSubject("acme"), testMsgID("L"+string(rune('a'+i)), 1), nil))
	}
	st, err := queue.Stats(t.Context(), js, cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	require.Equal(t, queue.ConsumerStats{Stream: cfg.Stream, Consumer: "processor", Pending: 3}, st)

	cons, err := js.Consumer(t.Context(), cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	batch, err := cons.Fetch(1)
	require.NoError(t, err)
	for m := range batch.Messages() {
		require.NoError(t, m.NakWithDelay(time.Hour))
	}
	require.NoError(t, batch.Error())

	st, err = queue.Stats(t.Context(), js, cfg.Stream, cfg.Processor.Durable)
	require.NoError(t, err)
	require.EqualValues(t, 2, st.Pending)
	require.Equal(t, 1, st.AckPending, "a message nak'ed with a delay still counts as ack pending")

	_, err = queue.Stats(t.Context(), js, cfg.Stream, "nope")
	require.ErrorIs(t, err, jetstream.ErrConsumerNotFound)
}

// testMsgID is the dedup id pkg/jobs gives a document's n-th process job.
func testMsgID(logID string, n int) string { return logID + ":process:" + strconv.Itoa(n) }
