package queue

// Workers run funcs on a fixed set of long-lived goroutines.
//
// A goroutine per message (or per S3 request) starts on a small stack and
// grows it, copy by copy, through the deep call chains it runs (pgx, zap,
// and then the S3 SDK's middleware stack): runtime.copystack was 5 % of the
// processor's CPU and 12 % of the dispatcher's under make bench. A worker
// keeps the stack it has grown for the next func. Consume runs its
// handlers on them; the processor its second result put.
type Workers struct{ jobs chan func() }

// NewWorkers starts n workers. Stop must be called once no more funcs come.
func NewWorkers(n int) *Workers {
	w := &Workers{jobs: make(chan func())}
	for range max(n, 1) {
		go func() {
			for f := range w.jobs {
				f()
			}
		}()
	}
	return w
}

// Go runs f on the next free worker, waiting for one; callers bound their
// funcs to the number of workers, so the wait is at most a worker's step
// back to its loop.
func (w *Workers) Go(f func()) { w.jobs <- f }

// Stop lets the workers exit once their current func returns.
func (w *Workers) Stop() { close(w.jobs) }
