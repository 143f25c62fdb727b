package processor

// putters run a document's second result put beside its worker, on a few
// long-lived goroutines. A new goroutine per put would grow its stack
// again, copy by copy, through the S3 SDK's middleware chain: that was
// 4.6 % of the processor's CPU under make bench.
type putters struct{ jobs chan func() }

// startPutters starts n putters; with n = the processor's concurrency a
// worker never waits for a free one.
func startPutters(n int) *putters {
	p := &putters{jobs: make(chan func())}
	for range n {
		go func() {
			for f := range p.jobs {
				f()
			}
		}()
	}
	return p
}

// do runs f on a putter and returns where its error arrives.
func (p *putters) do(f func() error) <-chan error {
	done := make(chan error, 1)
	p.jobs <- func() { done <- f() }
	return done
}

// stop ends the putters once no worker hands them more.
func (p *putters) stop() { close(p.jobs) }
