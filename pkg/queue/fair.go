package queue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/fairshare"
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
//
// Policy makes the turns fair by cost (fairshare): the handler's time is
// charged to its tenant, the tenant that used least recently goes first, a
// tenant holds at most its share of the workers while others wait, and a
// tenant with no message in flight may start on a reserve worker when all
// are busy, so it never waits for another tenant's slow documents. The
// handler's context names its tenant (fairshare.TenantOf), so the
// resources it uses downstream (PDF helpers) can share by tenant too.
type Fair struct {
	// Tenant names the tenant of a message by its subject. Defaults to the
	// subject's last token (<prefix>.process.<client>).
	Tenant func(subject string) string
	// Window is how many messages are held ahead of the workers. Defaults
	// to DefaultFairWindow.
	Window int
	// PerTenant caps one tenant's messages in flight; 0 means the whole
	// concurrency (a lone tenant may use every worker, and a tenant waiting
	// behind it gets the next free one). concurrency-1 keeps a worker free
	// for the others at the price of a lone tenant's throughput.
	PerTenant int
	// Policy shares the workers by measured cost (see above); the zero
	// value takes tenants in plain turns.
	Policy fairshare.Policy
	// Held, when set, is told how many messages the window holds (pulled,
	// waiting for a worker) each time that changes. The broker counts them
	// as delivered (ack pending), so this is the part of the queue only the
	// process sees: an ops gauge. Called with the queue's lock held: it must
	// not block.
	Held func(n int)
}

// LastToken is Fair's default Tenant: the subject's last token.
func LastToken(subject string) string { return subject[strings.LastIndexByte(subject, '.')+1:] }

// fairQueue holds pulled messages per tenant and hands them out in turn
// (by least cost when it has a ledger) to the workers it counts in slots.
type fairQueue struct {
	mu        sync.Mutex
	cond      *sync.Cond
	queues    map[string][]jetstream.Msg
	ring      []string // tenants in the order they take turns
	next      int      // ring index of the tenant whose turn is next
	inflight  map[string]int
	slots     *fairshare.Slots
	ledger    *fairshare.Ledger // nil: plain turns
	held      int
	window    int
	perTenant int
	closed    bool
	report    func(held int)
}

func newFairQueue(window, perTenant, workers int, p fairshare.Policy, report func(int)) *fairQueue {
	if report == nil {
		report = func(int) {}
	}
	q := &fairQueue{queues: map[string][]jetstream.Msg{}, inflight: map[string]int{}, window: window, perTenant: perTenant,
		slots: fairshare.NewSlots(workers, p), report: report}
	if p.HalfLife > 0 {
		q.ledger = fairshare.NewLedger(p.HalfLife)
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// started is a message handed to a worker.
type started struct {
	tenant string
	msg    jetstream.Msg
	grant  fairshare.Grant
	end    func() // stops charging its time
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

// take blocks until a worker is free for some tenant with a message and
// a free in-flight place, and returns that tenant's next message: the
// tenant Slots.Choose names among them in ring order from the one whose
// turn is next. ok is false when closed.
func (q *fairQueue) take() (s started, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var cost func(string) time.Duration
	if q.ledger != nil {
		cost = q.ledger.Cost
	}
	for !q.closed {
		var waiting []string
		var ringIdx []int
		for i := range len(q.ring) {
			k := (q.next + i) % len(q.ring)
			if t := q.ring[k]; len(q.queues[t]) > 0 && q.inflight[t] < q.perTenant {
				waiting, ringIdx = append(waiting, t), append(ringIdx, k)
			}
		}
		if i, found := q.slots.Choose(waiting, cost); found {
			return q.start(waiting[i], ringIdx[i]), true
		}
		q.cond.Wait()
	}
	return started{}, false
}

// start takes tenant's next message (its ring index k). Called with mu held.
func (q *fairQueue) start(tenant string, k int) started {
	msgs := q.queues[tenant]
	s := started{tenant: tenant, msg: msgs[0], grant: q.slots.Take(tenant), end: func() {}}
	msgs[0] = nil
	q.queues[tenant] = msgs[1:]
	q.inflight[tenant]++
	q.held--
	q.report(q.held)
	q.next = k + 1
	q.forget(tenant)
	if q.ledger != nil {
		s.end = q.ledger.Begin(tenant)
	}
	q.cond.Broadcast()
	return s
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

func (q *fairQueue) done(s started) {
	s.end()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.inflight[s.tenant]--
	q.slots.Release(s.grant)
	q.forget(s.tenant)
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
	f = f.withDefaults(concurrency)
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	// Pull in modest batches: what the iterator buffers has no heartbeat.
	iter, err := messages(cons, min(f.Window, 64))
	if err != nil {
		return err
	}
	q := newFairQueue(f.Window, f.PerTenant, concurrency, f.Policy, f.Held)
	workCtx, hardStop := context.WithCancel(context.WithoutCancel(ctx))
	defer hardStop()

	var iterErr error
	pulled := make(chan struct{})
	go pullFair(ctx, iter, q, f.Tenant, pulled, &iterErr)
	beats := make(chan struct{})
	go c.beatHeld(q, pulled, beats)

	var inflight sync.WaitGroup
	// The queue counts the workers in use (reserve ones included).
	pool := NewWorkers(concurrency + f.Policy.BurstOf(concurrency))
	defer pool.Stop()
	for {
		s, ok := q.take()
		if !ok {
			break
		}
		inflight.Add(1)
		pool.Go(func() {
			defer inflight.Done()
			defer q.done(s)
			c.handle(fairshare.WithTenant(workCtx, s.tenant), s.msg)
		})
	}
	<-pulled
	<-beats
	return c.finish(ctx, iter, q.drain(), &inflight, grace, hardStop, iterErr)
}

// withDefaults fills in f's unset fields for concurrency workers.
func (f Fair) withDefaults(concurrency int) Fair {
	if f.Tenant == nil {
		f.Tenant = LastToken
	}
	if f.Window <= 0 {
		f.Window = DefaultFairWindow
	}
	if f.PerTenant <= 0 || f.PerTenant > concurrency {
		f.PerTenant = concurrency
	}
	return f
}

// pullFair moves messages from iter into q, by tenant, while q has room,
// and closes pulled and q when it stops. A pull error while ctx is live is
// left in *iterErr (read only after pulled is closed).
func pullFair(ctx context.Context, iter jetstream.MessagesContext, q *fairQueue, tenant func(string) string, pulled chan<- struct{}, iterErr *error) {
	defer close(pulled)
	defer q.close()
	for q.waitRoom() {
		msg, err := iter.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() == nil {
				*iterErr = err
				if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					iter.Stop()
				}
			}
			return
		}
		q.add(tenant(msg.Subject()), msg)
	}
}

// beatHeld marks the messages waiting in q in progress every heartbeat
// until pulled is closed, so that the server does not redeliver them while
// they wait for a worker; it closes beats when it stops.
func (c *consumer) beatHeld(q *fairQueue, pulled <-chan struct{}, beats chan<- struct{}) {
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
}
