package pdftext

import (
	"context"
	"testing"

	"github.com/docintake/docintake/pkg/fairshare"
	"github.com/stretchr/testify/require"
)

// While one tenant's document holds the only helper, another tenant's
// document is read on a reserve helper instead of waiting for it (the
// share and the order are fairshare's tests).
func TestResidentReserveHelperForQuietTenant(t *testing.T) {
	t.Parallel()
	eng := newTestResident(t, Options{Workers: 1, Fair: fairshare.Policy{Share: 50, Burst: 100}})
	busy := make(chan struct{})
	release := make(chan struct{})
	eng.pool.afterWrite = func(ctx context.Context, _ int) {
		if fairshare.TenantOf(ctx) == "noisy" {
			close(busy)
			<-release
		}
	}
	noisy := fairshare.WithTenant(t.Context(), "noisy")
	done := make(chan error, 1)
	go func() { _, err := eng.Extract(noisy, slowPDF()); done <- err }()
	<-busy

	got, err := eng.Extract(fairshare.WithTenant(t.Context(), "quiet"), orderPDF())
	require.NoError(t, err, "the quiet tenant's document was read while the noisy one held the pool")
	require.Contains(t, got.String(), "PO-4711")

	close(release)
	require.NoError(t, <-done)
}
