package observability_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/observability"
	"github.com/stretchr/testify/require"
)

func TestServePprofOffReturnsAtOnce(t *testing.T) {
	require.NoError(t, observability.ServePprof(t.Context(), ""))
}

func TestServePprofServesProfiles(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- observability.ServePprof(ctx, addr) }()
	require.Eventually(t, func() bool {
		res, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
}

func TestServePprofPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	require.ErrorContains(t, observability.ServePprof(t.Context(), ln.Addr().String()), "pprof listen")
}
