package ingest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// tokenStore is a Store whose tokens can be revoked and whose lookups are
// counted.
type tokenStore struct {
	fakeStore
	mu      sync.Mutex
	valid   map[string]document.Client
	lookups int
}

func (ts *tokenStore) ClientByToken(_ context.Context, token string) (document.Client, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.lookups++
	cl, ok := ts.valid[token]
	if !ok {
		return document.Client{}, document.Errorf(document.EUNAUTHENTICATED, "invalid access token")
	}
	return cl, nil
}

func (ts *tokenStore) count() int { ts.mu.Lock(); defer ts.mu.Unlock(); return ts.lookups }

func (ts *tokenStore) revoke(token string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.valid, token)
}

// A token lookup is reused for tokenCacheTTL and no longer: a revoked
// token is refused once the TTL has passed, unknown tokens are looked up
// every time, and no webhook secret is kept.
func TestTokenCacheRevocation(t *testing.T) {
	ts := &tokenStore{valid: map[string]document.Client{
		"tok": {ID: "acme", Name: "ACME", WebhookToken: "secret-w", SigningSecret: "secret-s"},
	}}
	s := New(Config{}, ts, &fakeObjects{objs: map[string][]byte{}}, oneTemplate{}, zap.NewNop(),
		prometheus.NewRegistry(), observability.NewHealth())
	clock := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	ctx := t.Context()

	cl, err := s.clientByToken(ctx, "tok")
	if err != nil || cl.ID != "acme" {
		t.Fatalf("first lookup: %+v %v", cl, err)
	}
	clock = clock.Add(tokenCacheTTL / 2)
	cl, err = s.clientByToken(ctx, "tok")
	if err != nil || cl.ID != "acme" || cl.Name != "ACME" {
		t.Fatalf("cached lookup: %+v %v", cl, err)
	}
	if n := ts.count(); n != 1 {
		t.Fatalf("a lookup within the TTL went to the store: %d lookups", n)
	}
	if cl.WebhookToken != "" || cl.SigningSecret != "" {
		t.Fatalf("the cache kept webhook secrets: %+v", cl)
	}

	ts.revoke("tok")
	clock = clock.Add(tokenCacheTTL / 2)
	if _, err := s.clientByToken(ctx, "tok"); document.ErrorKind(err) != document.EUNAUTHENTICATED {
		t.Fatalf("revoked token still accepted %s after its lookup: %v", tokenCacheTTL, err)
	}
	for range 3 {
		if _, err := s.clientByToken(ctx, "nope"); document.ErrorKind(err) != document.EUNAUTHENTICATED {
			t.Fatalf("unknown token: %v", err)
		}
	}
	if n := ts.count(); n != 5 {
		t.Fatalf("failed lookups must not be cached: %d lookups, want 5", n)
	}
}

// The cache holds at most tokenCacheMax tokens.
func TestTokenCacheBounded(t *testing.T) {
	now := time.Now()
	tc := newTokenCache(time.Minute, func() time.Time { return now })
	for i := range tokenCacheMax + 10 {
		var h [32]byte
		copy(h[:], fmt.Sprintf("%032d", i))
		tc.put(h, document.Client{ID: "c"})
		if len(tc.m) > tokenCacheMax {
			t.Fatalf("%d entries after %d puts", len(tc.m), i+1)
		}
	}
	var last [32]byte
	copy(last[:], fmt.Sprintf("%032d", tokenCacheMax+9))
	if _, ok := tc.get(last); !ok {
		t.Fatal("the newest entry is missing")
	}
}
