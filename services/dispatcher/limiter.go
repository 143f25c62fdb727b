package dispatcher

import "sync"

// limiter bounds the webhook calls in flight per client in this process.
type limiter struct {
	per int
	mu  sync.Mutex
	n   map[string]int
}

func newLimiter(per int) *limiter { return &limiter{per: per, n: map[string]int{}} }

// tryAcquire takes a slot of client without waiting; ok is false when all
// its slots are taken. release must be called exactly once.
func (l *limiter) tryAcquire(client string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[client] >= l.per {
		return nil, false
	}
	l.n[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.n[client]--; l.n[client] == 0 {
				delete(l.n, client)
			}
		})
	}, true
}
