// Package queue is docintake's JetStream layer: the INTAKE stream and its
// durable pull consumers, publishing with Nats-Msg-Id deduplication, the
// outbox relay, and the consumer loop every worker runs. It uses only the
// nats.go jetstream package.
//
// # Topology
//
// Ensure declares one work-queue stream (file storage) with subjects
// <prefix>.process.> and <prefix>.deliver.>, and two durable pull consumers,
// "processor" and "dispatcher", one per subject space, with explicit acks.
// Messages carry job ids only (pkg/jobspb); PostgreSQL is the source of
// truth.
//
// # Publishing
//
// Jobs are written to the outbox table in the same transaction as the state
// change. The store hands every committed row to the process's Relay, which
// publishes it at once (asynchronously: all messages of a batch sent, then
// all acks awaited) and deletes the published rows in batches; rows nobody
// handed over are claimed from the table by the relays' polls. A relay that
// dies between publish and delete leaves the row to be published again with
// the same message id, which the stream drops. A process runs one relay
// around all of its services:
//
//	cfg := queue.DefaultConfig()
//	if err := queue.Ensure(ctx, js, cfg); err != nil { ... }
//	relay := queue.NewRelay(st, queue.NewPublisher(js, cfg.Stream), logger, queue.RelayOptions{})
//	st.HandOutboxTo(relay.Handoff) // system.NewRelay does both
//	err := relay.Serve(ctx, grace, func(ctx context.Context) error {
//		return runServices(ctx, st) // they only write outbox rows
//	})
//
// # Consuming
//
// Consume pulls messages one by one into a bounded worker pool, keeps long
// handlers alive with InProgress heartbeats, and settles every message in one
// place from the handler's error (see Handler): nil acks, Permanent
// terminates, RetryAfter naks with a delay, other errors nak with the
// consumer's backoff, the last attempt terminates.
//
//	cons, err := js.Consumer(ctx, cfg.Stream, cfg.Processor.Durable)
//	err = queue.Consume(ctx, cons, 4, func(ctx context.Context, d queue.Delivery) error {
//		var job jobspb.ProcessJob
//		if err := proto.Unmarshal(d.Data, &job); err != nil {
//			return queue.Permanent(err)
//		}
//		return process(ctx, &job, d.LastAttempt())
//	}, queue.ConsumeOptions{Logger: logger})
package queue
