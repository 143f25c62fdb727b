package config

import "github.com/docintake/docintake/pkg/queue"

// Queue is the stream and consumer configuration c selects, as every
// process declares it.
func (c Config) Queue() queue.Config {
	return queue.Config{Stream: c.Stream, SubjectPrefix: c.SubjectPrefix, Replicas: c.StreamReplicas,
		// Every process declares the consumers at start, so the processor's
		// settings must come from the shared configuration, or processes
		// would flip them back and forth.
		Processor: queue.ConsumerConfig{AckWait: c.ProcessorAckWait, MaxAckPending: c.ProcessorMaxAckPending},
	}.WithDefaults()
}
