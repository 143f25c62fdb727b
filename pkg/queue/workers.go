package queue

import "sync"

// workers runs handlers on a fixed set of long-lived goroutines.
//
// A goroutine per message starts on a small stack and grows it, copy by
// copy, through the deep call chains a handler runs (the S3 SDK's
// middleware stack, pgx, zap): runtime.copystack was 5 % of the
// processor's CPU and 12 % of the dispatcher's under make bench. A worker
// keeps the stack it has grown for the next message.
type workers struct {
	jobs     chan func()
	inflight *sync.WaitGroup
}

// startWorkers starts n workers; every job handed to Go is counted in
// inflight until it returns. stop must be called once no more jobs come.
func startWorkers(n int, inflight *sync.WaitGroup) *workers {
	w := &workers{jobs: make(chan func()), inflight: inflight}
	for range n {
		go func() {
			for f := range w.jobs {
				f()
				inflight.Done()
			}
		}()
	}
	return w
}

// Go runs f on the next free worker, waiting for one; callers bound their
// jobs to the number of workers (a slot each), so the wait is at most a
// worker's step back to its loop.
func (w *workers) Go(f func()) {
	w.inflight.Add(1)
	w.jobs <- f
}

// stop lets the workers exit once their current job returns.
func (w *workers) stop() { close(w.jobs) }
