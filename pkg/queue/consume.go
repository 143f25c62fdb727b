package queue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Delivery is one delivery of a job message, as a Handler sees it. Handlers
// never ack: they return an error and Consume settles the message.
type Delivery struct {
	Stream   string
	Consumer string
	Subject  string
	// MsgID is the Nats-Msg-Id the message was published with.
	MsgID string
	Data  []byte
	// NumDelivered is the attempt number, 1 on first delivery.
	NumDelivered uint64
	// MaxDeliver is the consumer's limit (<= 0: unlimited).
	MaxDeliver int
	// StreamSeq is the message's sequence number in the stream.
	StreamSeq uint64
	// Published is when the stream stored the message.
	Published time.Time
	// Header holds the message headers, among them the W3C trace context
	// of the upload (observability.StartJobSpan continues that trace).
	Header nats.Header
}

// LastAttempt reports whether this is the consumer's final delivery of the
// message. A handler that fails now should record the failure (DLQ) in the
// database before returning, because Consume terminates the message instead
// of retrying it.
func (d Delivery) LastAttempt() bool {
	return d.MaxDeliver > 0 && d.NumDelivered >= uint64(d.MaxDeliver)
}

// Handler processes one delivery. It must be idempotent: messages are
// delivered at least once. ctx is cancelled only at a hard stop (see
// ConsumeOptions.ShutdownGrace). The returned error decides the settlement:
//
//	nil                   Ack
//	Permanent(err)        Term (no retry)
//	on the last attempt   Term (retries exhausted)
//	after a hard stop     Nak (redeliver at once, to another worker)
//	RetryAfter(d, err)    NakWithDelay(d)
//	any other error       NakWithDelay(backoff of the attempt)
//
// A panic in the handler is recovered and counts as an ordinary error.
type Handler func(ctx context.Context, d Delivery) error

// ConsumeOptions tune Consume; the zero value is usable.
type ConsumeOptions struct {
	// Logger receives one line per nak or term. Nil logs nothing.
	Logger *zap.Logger
	// ShutdownGrace is how long in-flight handlers may run after ctx is
	// cancelled before their context is cancelled too. Defaults to
	// DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Backoff returns the nak delay after a failed attempt (numDelivered is
	// 1 after the first). Defaults to 1s doubling up to 5m.
	Backoff func(numDelivered uint64) time.Duration
	// Heartbeat is the interval of InProgress calls while a handler runs.
	// Defaults to the consumer's AckWait/3.
	Heartbeat time.Duration
	// Prefetch is how many messages the client pulls ahead of the workers.
	// Prefetched messages wait without heartbeats, so keep it small.
	// Defaults to 1.
	Prefetch int
	// Fair, when set, shares the workers fairly between tenants instead of
	// taking messages in stream order (see Fair).
	Fair *Fair
}

// Consume runs handler on the consumer's messages with at most concurrency
// handlers at a time, until ctx is cancelled. It then stops pulling, naks
// messages already pulled but not started (so a peer takes them at once),
// waits up to ShutdownGrace for running handlers, cancels their context if
// they are still running, and returns nil. It returns an error when the
// consumer cannot be read (deleted, connection closed) — after the running
// handlers have finished.
func Consume(ctx context.Context, cons jetstream.Consumer, concurrency int, handler Handler, opts ConsumeOptions) error {
	if cons == nil || handler == nil {
		panic("queue: Consume with nil consumer or handler")
	}
	if concurrency < 1 {
		return fmt.Errorf("queue: concurrency must be at least 1, got %d", concurrency)
	}
	c := newConsumer(cons, handler, opts)
	if opts.Fair != nil {
		return c.consumeFair(ctx, cons, concurrency, *opts.Fair, opts.ShutdownGrace)
	}
	grace := opts.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	iter, err := messages(cons, max(opts.Prefetch, 1))
	if err != nil {
		return fmt.Errorf("consume %s: %w", c.name, err)
	}

	// Handlers run on workCtx: not cancelled by ctx (soft stop), only by
	// hardStop once the grace period is over.
	workCtx, hardStop := context.WithCancel(context.WithoutCancel(ctx))
	defer hardStop()
	slots := make(chan struct{}, concurrency)
	var inflight sync.WaitGroup
	pool := NewWorkers(concurrency)
	defer pool.Stop()
	var iterErr error
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		if ctx.Err() != nil { // select picks at random when both are ready
			<-slots
			break
		}
		// NextContext: a soft stop must not wait for the next message.
		msg, err := iter.Next(jetstream.NextContext(ctx))
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				iterErr = err // closed under us: connection closed, consumer deleted
				break
			}
			// Terminal iterator errors (consumer deleted, ...) stop the
			// iterator; the next call reports it closed.
			iterErr = err
			iter.Stop()
			continue
		}
		inflight.Add(1)
		pool.Go(func() {
			defer inflight.Done()
			defer func() { <-slots }()
			c.handle(workCtx, msg)
		})
	}
	return c.finish(ctx, iter, nil, &inflight, grace, hardStop, iterErr)
}

// newConsumer reads the consumer's settings once.
func newConsumer(cons jetstream.Consumer, handler Handler, opts ConsumeOptions) *consumer {
	info := cons.CachedInfo()
	c := &consumer{
		handler:    handler,
		logger:     opts.Logger,
		stream:     info.Stream,
		name:       info.Name,
		maxDeliver: info.Config.MaxDeliver,
		heartbeat:  opts.Heartbeat,
		backoff:    opts.Backoff,
	}
	if c.logger == nil {
		c.logger = zap.NewNop()
	}
	c.logger = c.logger.With(zap.String("stream", c.stream), zap.String("consumer", c.name))
	if c.heartbeat <= 0 {
		c.heartbeat = info.Config.AckWait / 3
	}
	if c.backoff == nil {
		c.backoff = DefaultBackoff
	}
	return c
}

// messages opens the pull iterator, pulling up to batch messages ahead.
func messages(cons jetstream.Consumer, batch int) (jetstream.MessagesContext, error) {
	return cons.Messages(jetstream.PullMaxMessages(batch),
		// A stopped iterator's pull request lives on in the server until it
		// expires, and the server keeps routing messages (and our shutdown
		// naks) to it while our connection is open; a short expiry bounds
		// that to seconds instead of the default 30 s.
		jetstream.PullExpiry(5*time.Second), jetstream.PullHeartbeat(2*time.Second),
		// Missed heartbeats are handled inside the iterator (it re-pulls);
		// reporting them would only make Next return early.
		jetstream.WithMessagesErrOnMissingHeartbeat(false))
}

// finish ends a Consume: on a soft stop it hands back the messages pulled
// but not started (held, plus what the iterator still buffers) and gives
// running handlers the grace period; when the iterator failed it stops the
// handlers at once, since nothing can be settled any more.
func (c *consumer) finish(ctx context.Context, iter jetstream.MessagesContext, held []jetstream.Msg,
	inflight *sync.WaitGroup, grace time.Duration, hardStop func(), iterErr error) error {
	if ctx.Err() != nil {
		c.returnPrefetched(iter, held)
	} else {
		iter.Stop()
		// Held messages come back after AckWait: the connection is gone.
	}
	finished := make(chan struct{})
	go func() { inflight.Wait(); close(finished) }()
	if ctx.Err() != nil {
		select {
		case <-finished:
		case <-time.After(grace):
			hardStop()
			<-finished
		}
	} else {
		hardStop()
		<-finished
	}
	if iterErr != nil {
		return fmt.Errorf("consume %s: %w", c.name, iterErr)
	}
	return nil
}

// consumer holds what one Consume call needs to run and settle messages.
type consumer struct {
	handler    Handler
	logger     *zap.Logger
	stream     string
	name       string
	maxDeliver int
	heartbeat  time.Duration
	backoff    func(uint64) time.Duration
}

func (c *consumer) handle(workCtx context.Context, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		// Not a JetStream message: nothing to retry.
		c.logger.Error("message without metadata terminated", zap.String("subject", msg.Subject()), zap.Error(err))
		_ = msg.Term()
		return
	}
	d := Delivery{
		Stream:       c.stream,
		Consumer:     c.name,
		Subject:      msg.Subject(),
		MsgID:        msg.Headers().Get(jetstream.MsgIDHeader),
		Data:         msg.Data(),
		NumDelivered: meta.NumDelivered,
		MaxDeliver:   c.maxDeliver,
		StreamSeq:    meta.Sequence.Stream,
		Published:    meta.Timestamp,
		Header:       msg.Headers(),
	}
	stop := startHeartbeat(msg, c.heartbeat)
	err = c.call(workCtx, d)
	stop()
	c.settle(msg, d, decide(err, d, workCtx.Err() != nil, c.backoff))
}

// call runs the handler, turning a panic into an error so that one bad
// message cannot crash the worker.
func (c *consumer) call(ctx context.Context, d Delivery) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panic: %v\n%s", r, debug.Stack())
		}
	}()
	return c.handler(ctx, d)
}

// startHeartbeat calls InProgress every interval until stop is called, so a
// long handler keeps its message (resets the server's ack timer).
func startHeartbeat(msg jetstream.Msg, every time.Duration) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return func() { close(done); <-exited }
}

// action is how a message is settled.
type action int

const (
	actAck action = iota
	actTerm
	actNak
	actNakDelay
)

func (a action) String() string {
	return [...]string{"ack", "term", "nak", "nak_delay"}[a]
}

// settlement is the decision for one delivery.
type settlement struct {
	action action
	delay  time.Duration
	err    error
}

// decide maps a handler result to a settlement. It is the only place that
// knows the rules (see Handler).
func decide(err error, d Delivery, hardStopped bool, backoff func(uint64) time.Duration) settlement {
	var retry *RetryAfterError
	switch {
	case err == nil:
		return settlement{action: actAck}
	case IsPermanent(err):
		return settlement{action: actTerm, err: err}
	case d.LastAttempt():
		// The server would not redeliver anyway, and an unacked message
		// would stay in the work queue forever.
		return settlement{action: actTerm, err: fmt.Errorf("attempts exhausted (%d): %w", d.NumDelivered, err)}
	case hardStopped:
		return settlement{action: actNak, err: err}
	case errors.As(err, &retry):
		return settlement{action: actNakDelay, delay: retry.Delay, err: err}
	default:
		return settlement{action: actNakDelay, delay: backoff(d.NumDelivered), err: err}
	}
}

// maxTermReason keeps advisories small; the full error is logged.
const maxTermReason = 256

func (c *consumer) settle(msg jetstream.Msg, d Delivery, s settlement) {
	var err error
	switch s.action {
	case actAck:
		err = msg.Ack()
	case actTerm:
		reason := s.err.Error()
		if len(reason) > maxTermReason {
			reason = reason[:maxTermReason]
		}
		err = msg.TermWithReason(reason)
	case actNak:
		err = msg.Nak()
	case actNakDelay:
		err = msg.NakWithDelay(s.delay)
	}
	if s.action == actAck && err == nil {
		return
	}
	fields := []zap.Field{
		zap.String("action", s.action.String()),
		zap.String("subject", d.Subject),
		zap.String("msg_id", d.MsgID),
		zap.Uint64("delivery", d.NumDelivered),
	}
	if s.action == actNakDelay {
		fields = append(fields, zap.Duration("delay", s.delay))
	}
	if s.err != nil {
		fields = append(fields, zap.NamedError("cause", s.err))
	}
	switch {
	case err != nil:
		// The server will redeliver after AckWait; nothing else to do.
		c.logger.Warn("settle message failed", append(fields, zap.Error(err))...)
	case s.action == actTerm:
		c.logger.Error("message terminated", fields...)
	default:
		c.logger.Warn("message will be redelivered", fields...)
	}
}

// settleShutdown returns a message pulled during shutdown, unprocessed.
// returnPrefetched hands messages pulled but not started back to the
// stream. They are collected first and nak'ed only after the iterator is
// stopped: while our pull request is open the server would deliver a nak'ed
// message straight back to us instead of to a peer.
func (c *consumer) returnPrefetched(iter jetstream.MessagesContext, held []jetstream.Msg) {
	for {
		// Buffered messages come back at once; the short wait only bounds
		// the case where none are left.
		msg, err := iter.Next(jetstream.NextMaxWait(20 * time.Millisecond))
		if err != nil {
			break
		}
		held = append(held, msg)
	}
	iter.Stop()
	for _, msg := range held {
		c.settleShutdown(msg)
	}
}

func (c *consumer) settleShutdown(msg jetstream.Msg) {
	if err := msg.Nak(); err != nil {
		c.logger.Warn("nak on shutdown failed", zap.String("subject", msg.Subject()), zap.Error(err))
	}
}

// DefaultBackoff is Consume's nak delay after failed attempt n: 1s, 2s, 4s,
// … up to 5m.
func DefaultBackoff(n uint64) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 9 {
		return 5 * time.Minute
	}
	return min(time.Second<<(n-1), 5*time.Minute)
}
