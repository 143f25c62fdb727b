package queue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/nats-io/nats.go/jetstream"
)

// Fair makes Consume share its workers between tenants. JetStream delivers
// in stream order, so one tenant's burst would otherwise occupy every worker
// until it is worked off. In fair mode Consume pulls up to Window messages
// ahead of the workers (heartbeating them, so the server does not redeliver
// them), queues them per tenant and starts the next message of the tenants
// in turn, skipping a tenant that already has PerTenant messages in flight.
//
// The guarantee is per process and within the window: a tenant whose
// message is among those pulled waits for at most one message of each other
// tenant (plus the handlers already running), however many the others have
// queued. A message further back in the stream than Window waits until the
// window reaches it, so Window should exceed the bursts expected; each held
// message costs one InProgress call per heartbeat interval.
type Fair struct {
	// Tenant names the tenant of a message by its subject. Defaults to the
	// subject's last token (<prefix>.process.<client>).
	Tenant func(subject string) string
	// Window is how many messages are held ahead of the workers. Defaults
	// to 256.
	Window int
	// PerTenant caps one tenant's messages in flight; 0 means the whole
	// concurrency (a lone tenant may use every worker, and a tenant waiting
	// behind it gets the next free one). concurrency-1 keeps a worker free
	// for the others at the price of a lone tenant's throughput.
	PerTenant int
	// Held, when set, is told how many messages the window holds (pulled,
	// waiting for a worker) each time that changes. The broker counts them
	// as delivered (ack pending), so this is the part of the queue only the
	// process sees: an ops gauge. Called with the queue's lock held: it must
	// not block.
	Held func(n int)
}

// LastToken is Fair's default Tenant: the subject's last token.
func LastToken(subject string) string { return subject[strings.LastIndexByte(subject, '.')+1:] }

// fairQueue holds pulled messages per tenant and hands them out in turn.
type fairQueue struct {
	mu        sync.Mutex
	cond      *sync.Cond
	queues    map[string][]jetstream.Msg
	ring      []string // tenants in the order they take turns
	next      int      // ring index of the tenant whose turn is next
	inflight  map[string]int
	held      int
	window    int
	perTenant int
	closed    bool
	report    func(held int)
}

func newFairQueue(window, perTenant int, report func(int)) *fairQueue {
	if report == nil {
		report = func(int) {}
	}
	q := &fairQueue{queues: map[string][]jetstream.Msg{}, inflight: map[string]int{}, window: window, perTenant: perTenant, report: report}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// waitRoom blocks until the window has room; false when closed.
func (q *fairQueue) waitRoom() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.held >= q.window && !q.closed {
		q.cond.Wait()
	}
	return !q.closed
}

func (q *fairQueue) add(tenant string, msg jetstream.Msg) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.queues[tenant]; !ok {
		q.ring = append(q.ring, tenant)
	}
	q.queues[tenant] = append(q.queues[tenant], msg)
	q.held++
	q.report(q.held)
	q.cond.Broadcast()
}

// take blocks until some tenant whose turn it is has a message and a free
// in-flight place, and returns that message; nil when closed.
func (q *fairQueue) take() (string, jetstream.Msg) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed {
		for i := range len(q.ring) {
			k := (q.next + i) % len(q.ring)
			tenant := q.ring[k]
			msgs := q.queues[tenant]
			if len(msgs) == 0 || q.inflight[tenant] >= q.perTenant {
				continue
			}
			msg := msgs[0]
			msgs[0] = nil
			q.queues[tenant] = msgs[1:]
			q.inflight[tenant]++
			q.held--
			q.report(q.held)
			q.next = k + 1
			q.forget(tenant)
			q.cond.Broadcast()
			return tenant, msg
		}
		q.cond.Wait()
	}
	return "", nil
}

// forget drops an idle tenant from the ring so it stays as small as the set
// of tenants with work. Called with mu held.
func (q *fairQueue) forget(tenant string) {
	if len(q.queues[tenant]) > 0 || q.inflight[tenant] > 0 {
		return
	}
	delete(q.queues, tenant)
	delete(q.inflight, tenant)
	for i, t := range q.ring {
		if t == tenant {
			q.ring = append(q.ring[:i], q.ring[i+1:]...)
			if q.next > i {
				q.next--
			}
			break
		}
	}
	if q.next >= len(q.ring) {
		q.next = 0
	}
}

func (q *fairQueue) done(tenant string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inflight[tenant]--
	q.forget(tenant)
	q.cond.Broadcast()
}

// snapshot returns the held messages (for heartbeats).
func (q *fairQueue) snapshot() []jetstream.Msg {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]jetstream.Msg, 0, q.held)
	for _, msgs := range q.queues {
		out = append(out, msgs...)
	}
	return out
}

// close stops handing out messages and wakes every waiter.
func (q *fairQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// drain returns the messages still held, which nobody will start now.
func (q *fairQueue) drain() []jetstream.Msg {
	held := q.snapshot()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queues, q.held = map[string][]jetstream.Msg{}, 0
	q.report(0)
	return held
}

// consumeFair is Consume in fair mode: a puller fills the per-tenant queues,
// the loop below starts handlers in turn, and a ticker heartbeats the held
// messages. Shutdown is Consume's.
func (c *consumer) consumeFair(ctx context.Context, cons jetstream.Consumer, concurrency int, f Fair, grace time.Duration) error {
	if f.Tenant == nil {
		f.Tenant = LastToken
	}
	if f.Window <= 0 {
		f.Window = 256
	}
	if f.PerTenant <= 0 || f.PerTenant > concurrency {
		f.PerTenant = concurrency
	}
	if grace <= 0 {
		grace = config.Defaults().ShutdownTimeout
	}
	// Pull in modest batches: what the iterator buffers has no heartbeat.
	iter, err := messages(cons, min(f.Window, 64))
	if err != nil {
		return err
	}
	q := newFairQueue(f.Window, f.PerTenant, f.Held)
	workCtx, hardStop := context.WithCancel(context.WithoutCancel(ctx))
	defer hardStop()

	var iterErr error
	pulled := make(chan struct{})
	go func() {
		defer close(pulled)
		defer q.close()
		for q.waitRoom() {
			msg, err := iter.Next(jetstream.NextContext(ctx))
			if err != nil {
				if ctx.Err() == nil {
					iterErr = err
					if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
						iter.Stop()
					}
				}
				return
			}
			q.add(f.Tenant(msg.Subject()), msg)
		}
	}()
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		if c.heartbeat <= 0 {
			return
		}
		t := time.NewTicker(c.heartbeat)
		defer t.Stop()
		for {
			select {
			case <-pulled:
				return
			case <-t.C:
				for _, msg := range q.snapshot() {
					_ = msg.InProgress()
				}
			}
		}
	}()

	slots := make(chan struct{}, concurrency)
	var inflight sync.WaitGroup
	pool := NewWorkers(concurrency)
	defer pool.Stop()
	for {
		slots <- struct{}{}
		tenant, msg := q.take()
		if msg == nil {
			<-slots
			break
		}
		inflight.Add(1)
		pool.Go(func() {
			defer inflight.Done()
			defer func() { <-slots }()
			defer q.done(tenant)
			c.handle(workCtx, msg)
		})
	}
	<-pulled
	<-beats
	return c.finish(ctx, iter, q.drain(), &inflight, grace, hardStop, iterErr)
}
