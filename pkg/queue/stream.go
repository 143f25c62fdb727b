package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/jobs"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config describes the stream and its two durable consumers. The zero value
// is not usable; start from DefaultConfig or call WithDefaults.
type Config struct {
	// Stream is the stream name. Defaults to DefaultStream.
	Stream string
	// SubjectPrefix is the first subject token: jobs go to
	// <prefix>.process.<client_id> and <prefix>.deliver.<client_id>.
	// Defaults to jobs.DefaultSubjectPrefix. Tests use their own stream and
	// prefix.
	SubjectPrefix string
	// Duplicates is the window in which a repeated Nats-Msg-Id is dropped.
	// Defaults to DefaultDuplicates; it must cover the longest time
	// between a publish and the outbox row's deletion.
	Duplicates time.Duration
	// Replicas of the stream. Defaults to DefaultReplicas.
	Replicas int
	// Storage of the stream. Defaults to (and is normally) file storage;
	// set memory storage only for throwaway setups.
	Storage jetstream.StorageType
	// Processor and Dispatcher configure the durable pull consumers.
	Processor  ConsumerConfig
	Dispatcher ConsumerConfig
}

// ConsumerConfig configures one durable pull consumer. Acks are always
// explicit.
type ConsumerConfig struct {
	// Durable is the consumer name: "processor" / "dispatcher" by default.
	Durable string
	// AckWait is how long the server waits for an ack (or an InProgress
	// heartbeat, which Consume sends every AckWait/3) before redelivering.
	// Defaults to DefaultProcessorAckWait for the processor,
	// DefaultDispatcherAckWait for the dispatcher.
	AckWait time.Duration
	// MaxDeliver bounds deliveries per message, naks included. Defaults
	// to DefaultMaxDeliver. The last delivery is flagged by
	// Delivery.LastAttempt.
	MaxDeliver int
	// BackOff is the server's redelivery schedule for unacked messages
	// (crashed or stuck workers): delivery n+1 comes BackOff[n-1] after
	// delivery n, the last value repeating; its first value must equal
	// AckWait and it must not have more steps than MaxDeliver. Defaults to
	// none (every redelivery after AckWait), deliberately: nats-server
	// measures a NakWithDelay(d) from the current BackOff step instead of
	// from AckWait, so from the second delivery on a nak waits
	// d + BackOff[n-1] - AckWait, which would distort the RetryAfter
	// schedules workers rely on. Set it only for consumers whose handlers
	// never nak with a delay.
	BackOff []time.Duration
	// MaxAckPending caps messages delivered but not yet acked across all
	// replicas. Messages nak'ed with a delay (deferred documents) count
	// against it until redelivered, so it must be well above the number of
	// documents that can be deferred at once, or deferrals starve new work.
	// Defaults to DefaultProcessorMaxAckPending for the processor,
	// DefaultDispatcherMaxAckPending for the dispatcher.
	MaxAckPending int
}

// DefaultConfig returns the production configuration.
func DefaultConfig() Config { return Config{}.WithDefaults() }

// WithDefaults returns c with every zero field set to its default (the
// Default* constants).
func (c Config) WithDefaults() Config {
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = jobs.DefaultSubjectPrefix
	}
	if c.Duplicates == 0 {
		c.Duplicates = DefaultDuplicates
	}
	if c.Replicas == 0 {
		c.Replicas = DefaultReplicas
	}
	if c.Processor.Durable == "" {
		c.Processor.Durable = "processor"
	}
	if c.Dispatcher.Durable == "" {
		c.Dispatcher.Durable = "dispatcher"
	}
	c.Processor = c.Processor.withDefaults(DefaultProcessorAckWait, DefaultProcessorMaxAckPending)
	c.Dispatcher = c.Dispatcher.withDefaults(DefaultDispatcherAckWait, DefaultDispatcherMaxAckPending)
	return c
}

func (c ConsumerConfig) withDefaults(ackWait time.Duration, maxAckPending int) ConsumerConfig {
	if c.AckWait == 0 {
		c.AckWait = ackWait
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = maxAckPending
	}
	return c
}

// Validate reports configuration the server would reject or silently
// change.
func (c Config) Validate() error {
	if c.Stream == "" || strings.ContainsAny(c.Stream, ".*> \t\r\n") {
		return fmt.Errorf("queue: invalid stream name %q", c.Stream)
	}
	if !validToken(c.SubjectPrefix) {
		return fmt.Errorf("queue: invalid subject prefix %q", c.SubjectPrefix)
	}
	if c.Duplicates <= 0 {
		return fmt.Errorf("queue: duplicates window must be positive, got %s", c.Duplicates)
	}
	for _, cc := range []ConsumerConfig{c.Processor, c.Dispatcher} {
		if err := cc.validate(); err != nil {
			return err
		}
	}
	if c.Processor.Durable == c.Dispatcher.Durable {
		return fmt.Errorf("queue: processor and dispatcher need different durable names, both are %q", c.Processor.Durable)
	}
	return nil
}

func (c ConsumerConfig) validate() error {
	switch {
	case !validToken(c.Durable):
		return fmt.Errorf("queue: invalid consumer name %q", c.Durable)
	case c.AckWait <= 0:
		return fmt.Errorf("queue: consumer %s: ack wait must be positive", c.Durable)
	case c.MaxDeliver < 1:
		return fmt.Errorf("queue: consumer %s: max deliver must be at least 1", c.Durable)
	case c.MaxAckPending < 1:
		return fmt.Errorf("queue: consumer %s: max ack pending must be at least 1", c.Durable)
	case len(c.BackOff) > c.MaxDeliver:
		return fmt.Errorf("queue: consumer %s: %d backoff steps exceed max deliver %d", c.Durable, len(c.BackOff), c.MaxDeliver)
	case len(c.BackOff) > 0 && c.BackOff[0] != c.AckWait:
		return fmt.Errorf("queue: consumer %s: first backoff %s must equal ack wait %s", c.Durable, c.BackOff[0], c.AckWait)
	case slices.ContainsFunc(c.BackOff, func(d time.Duration) bool { return d <= 0 }):
		return fmt.Errorf("queue: consumer %s: backoff steps must be positive", c.Durable)
	}
	return nil
}

// validToken reports whether s can be one subject token.
func validToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> \t\r\n")
}

// ProcessSubject is the subject of processing jobs for a client
// (jobs.ProcessSubject under c's prefix).
func (c Config) ProcessSubject(clientID string) string {
	return jobs.ProcessSubject(c.SubjectPrefix, clientID)
}

// DeliverSubject is the subject of delivery jobs for a client
// (jobs.DeliverSubject under c's prefix).
func (c Config) DeliverSubject(clientID string) string {
	return jobs.DeliverSubject(c.SubjectPrefix, clientID)
}

// Ensure creates the stream and both durable consumers, or updates them to
// cfg (after applying defaults). Idempotent and safe to run from several
// processes at once. Fails when the existing stream cannot take cfg (for
// example a different retention or storage), naming the stream.
func Ensure(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	err := retryAPI(ctx, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        cfg.Stream,
			Description: "docintake jobs: ids only, PostgreSQL is the source of truth",
			Subjects:    []string{jobs.ProcessFilter(cfg.SubjectPrefix), jobs.DeliverFilter(cfg.SubjectPrefix)},
			// Work-queue retention: a message is gone once a consumer acks or
			// terminates it; each subject has exactly one consumer.
			Retention:  jetstream.WorkQueuePolicy,
			Storage:    cfg.Storage,
			Replicas:   cfg.Replicas,
			Duplicates: cfg.Duplicates,
			Discard:    jetstream.DiscardOld,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("ensure stream %s: %w", cfg.Stream, err)
	}
	for _, c := range []struct {
		cc     ConsumerConfig
		filter string
	}{
		{cfg.Processor, jobs.ProcessFilter(cfg.SubjectPrefix)},
		{cfg.Dispatcher, jobs.DeliverFilter(cfg.SubjectPrefix)},
	} {
		err := retryAPI(ctx, func(ctx context.Context) error {
			_, err := js.CreateOrUpdateConsumer(ctx, cfg.Stream, jetstream.ConsumerConfig{
				Durable:       c.cc.Durable,
				FilterSubject: c.filter,
				DeliverPolicy: jetstream.DeliverAllPolicy,
				AckPolicy:     jetstream.AckExplicitPolicy,
				AckWait:       c.cc.AckWait,
				MaxDeliver:    c.cc.MaxDeliver,
				BackOff:       c.cc.BackOff,
				MaxAckPending: c.cc.MaxAckPending,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("ensure consumer %s on %s: %w", c.cc.Durable, cfg.Stream, err)
		}
	}
	return nil
}

// apiAttempt bounds one JetStream API request of Ensure. A request sent
// while a cluster elects its meta leader (every node starting at once, or
// the leader just killed) is never answered; without a bound of its own it
// would take the caller's whole start-up deadline.
const apiAttempt = 5 * time.Second

// retryAPI runs f, each attempt within apiAttempt, until it succeeds, fails
// for another reason than an unanswered request, or ctx ends.
func retryAPI(ctx context.Context, f func(context.Context) error) error {
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(ctx, apiAttempt)
		err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !unanswered(err) && !(clusterForming(err) && n < clusterAttempts) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(min(time.Duration(n)*250*time.Millisecond, 2*time.Second)):
		}
	}
}

// JetStream cluster errors that mean "not yet": a cluster still electing
// its meta leader or waiting for a peer that is starting (every process of
// a fleet starts at once, the NATS servers among them). They are answers,
// so they are retried a bounded number of times (about a minute), not for
// ever: a peer that stays away is a configuration error to report.
const (
	jsClusterNoPeers  jetstream.ErrorCode = 10005 // no suitable peers for placement
	jsClusterNotAvail jetstream.ErrorCode = 10008 // JetStream system temporarily unavailable
	clusterAttempts                       = 35
)

// clusterForming reports an error of a cluster that is still forming.
func clusterForming(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jsClusterNoPeers || apiErr.ErrorCode == jsClusterNotAvail)
}

// unanswered reports an API request that got no answer in time, or no
// server to answer it, as opposed to an answer that refused it.
func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// ConsumerStats is a consumer's backlog, for metrics and autoscaling.
type ConsumerStats struct {
	Stream   string
	Consumer string
	// Pending counts messages not yet delivered.
	Pending uint64
	// AckPending counts messages delivered and not yet acked, including
	// ones nak'ed with a delay that wait for redelivery.
	AckPending int
	// Redelivered counts messages delivered more than once and not yet
	// acked.
	Redelivered int
	// Waiting counts open pull requests (idle workers).
	Waiting int
}

// Stats reads a consumer's counters from the server. ENOTFOUND-like
// jetstream errors (jetstream.ErrConsumerNotFound, ErrStreamNotFound) are
// returned wrapped.
func Stats(ctx context.Context, js jetstream.JetStream, stream, consumer string) (ConsumerStats, error) {
	c, err := js.Consumer(ctx, stream, consumer)
	if err != nil {
		return ConsumerStats{}, fmt.Errorf("consumer %s on %s: %w", consumer, stream, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		return ConsumerStats{}, fmt.Errorf("consumer %s on %s: %w", consumer, stream, err)
	}
	return ConsumerStats{
		Stream:      stream,
		Consumer:    consumer,
		Pending:     info.NumPending,
		AckPending:  info.NumAckPending,
		Redelivered: info.NumRedelivered,
		Waiting:     info.NumWaiting,
	}, nil
}

// Publisher publishes job messages with Nats-Msg-Id deduplication.
type Publisher struct {
	js     jetstream.JetStream
	stream string

	asyncOnce sync.Once // PublishBatch's own context (asyncJS)
	async     jetstream.JetStream
	asyncErr  error
}

// NewPublisher returns a publisher whose messages must land in stream (the
// server's ack is checked, so a subject that maps to another stream fails
// instead of going astray). An empty stream skips that check.
func NewPublisher(js jetstream.JetStream, stream string) *Publisher {
	if js == nil {
		panic("queue: NewPublisher with nil JetStream")
	}
	return &Publisher{js: js, stream: stream}
}

// ErrEmptyMsgID is returned for a publish without a message id: without it
// a retried publish would duplicate the job.
var ErrEmptyMsgID = errors.New("queue: empty message id")

// Publish stores payload on subject and waits for the stream's ack. A msgID
// seen within the stream's duplicates window is acked without storing a
// second copy, so retrying a publish is safe. Returns an error when no
// stream takes the subject, the broker is unreachable or ctx ends.
func (p *Publisher) Publish(ctx context.Context, subject, msgID string, payload []byte) error {
	return p.PublishWithHeaders(ctx, subject, msgID, payload, nil)
}
