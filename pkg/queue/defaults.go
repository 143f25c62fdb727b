package queue

import "time"

// The queue's defaults: a Config, ConsumerConfig, RelayOptions,
// ConsumeOptions or Fair field left zero takes these. They are the
// package's own; pkg/config starts its documented environment defaults
// (INTAKE_STREAM, INTAKE_PROCESSOR_ACK_WAIT, …) and its Tuning from them and
// hands the values down, so the queue never reads the application's
// configuration.
const (
	// DefaultStream is the stream's name.
	DefaultStream = "INTAKE"
	// DefaultReplicas is the stream's copies (one server).
	DefaultReplicas = 1
	// DefaultDuplicates is the stream's Nats-Msg-Id dedup window. It must
	// cover the longest time between a publish and its outbox row's
	// deletion: DefaultRelayDeleteDelay, or DefaultRelayClaimAge plus a poll
	// when the relay that published the row died first.
	DefaultDuplicates = 2 * time.Minute
	// DefaultProcessorAckWait and DefaultProcessorMaxAckPending configure
	// the processor's consumer.
	DefaultProcessorAckWait       = 30 * time.Second
	DefaultProcessorMaxAckPending = 10000
	// DefaultDispatcherAckWait and DefaultDispatcherMaxAckPending configure
	// the dispatcher's consumer.
	DefaultDispatcherAckWait       = 30 * time.Second
	DefaultDispatcherMaxAckPending = 10000
	// DefaultMaxDeliver bounds deliveries per message of both consumers.
	DefaultMaxDeliver = 10
	// DefaultFairWindow is how many messages fair consumption holds ahead
	// of the workers (Fair.Window).
	DefaultFairWindow = 256
	// DefaultShutdownGrace is how long in-flight handlers may run after a
	// stop, and how long a relay's final flush may take.
	DefaultShutdownGrace = 25 * time.Second

	// DefaultRelayBatchSize is the number of outbox rows a relay claims and
	// publishes together.
	DefaultRelayBatchSize = 100
	// DefaultRelayPollInterval is how often a relay looks for rows it was
	// not handed.
	DefaultRelayPollInterval = time.Second
	// DefaultRelayPublishTimeout bounds the wait for a batch's acks.
	DefaultRelayPublishTimeout = 10 * time.Second
	// DefaultRelayClaimAge is how old a row must be before a relay's poll
	// claims it.
	DefaultRelayClaimAge = 2 * time.Second
	// DefaultRelayDeleteDelay is how long published hand-over rows wait to
	// be deleted together.
	DefaultRelayDeleteDelay = 50 * time.Millisecond
)
