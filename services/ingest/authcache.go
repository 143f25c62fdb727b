package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
)

// tokenCacheTTL is how long a successful token lookup is reused, and so the
// longest a revoked token keeps working on a replica that has just seen it.
// Under load one client's uploads come many per second on one token, and
// the lookup was one of the three PostgreSQL round trips of every upload
// (`make bench -profile`, BENCHMARKS.md); one second takes nearly all of
// them away while revocation still takes effect at once for any purpose a
// person can notice.
const tokenCacheTTL = time.Second

// tokenCacheMax bounds the cache: at most this many distinct tokens are
// remembered, so a flood of valid tokens cannot grow the heap without end.
const tokenCacheMax = 4096

// tokenCache remembers, per SHA-256 of a bearer token, the client a
// successful lookup returned, for tokenCacheTTL. Only successes are kept: an
// unknown token is looked up every time (so a token issued a moment ago
// works at once, and guessing fills nothing), and only the client's id,
// name and upload settings are kept (no webhook secrets outlive the request
// that read them).
type tokenCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[[32]byte]tokenEntry
}

type tokenEntry struct {
	client  document.Client
	expires time.Time
}

func newTokenCache(ttl time.Duration, now func() time.Time) *tokenCache {
	return &tokenCache{ttl: ttl, now: now, m: map[[32]byte]tokenEntry{}}
}

// get returns the cached client of the token hash h, if it has not expired.
func (tc *tokenCache) get(h [32]byte) (document.Client, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e, ok := tc.m[h]
	if !ok {
		return document.Client{}, false
	}
	if !tc.now().Before(e.expires) {
		delete(tc.m, h)
		return document.Client{}, false
	}
	return e.client, true
}

// put remembers a successful lookup.
func (tc *tokenCache) put(h [32]byte, cl document.Client) {
	now := tc.now()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if len(tc.m) >= tokenCacheMax {
		for k, e := range tc.m {
			if !now.Before(e.expires) {
				delete(tc.m, k)
			}
		}
		if len(tc.m) >= tokenCacheMax {
			clear(tc.m) // every entry is younger than the TTL: start over rather than pick victims
		}
	}
	// The settings an upload reads (unknown_party, route_unaddressed) are
	// kept too: a cached client without them turned a generic client's
	// second upload within the TTL into 400 template_not_found.
	tc.m[h] = tokenEntry{client: document.Client{ID: cl.ID, Name: cl.Name, UnknownParty: cl.UnknownParty,
		RouteUnaddressed: cl.RouteUnaddressed}, expires: now.Add(tc.ttl)}
}

// clientByToken authenticates tok, from the cache when a lookup of the same
// token succeeded less than tokenCacheTTL ago.
func (s *Server) clientByToken(ctx context.Context, tok string) (document.Client, error) {
	h := store.TokenHash(tok)
	if cl, ok := s.tokens.get(h); ok {
		return cl, nil
	}
	cl, err := s.store.ClientByToken(ctx, tok)
	if err != nil {
		return document.Client{}, err
	}
	s.tokens.put(h, cl)
	return cl, nil
}
