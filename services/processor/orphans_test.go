package processor_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/services/processor"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// A source object that no document names (the upload was killed between
// the object store write and the commit) is removed once older than the
// grace period, counted in the metric and in the store for `intakectl
// status`; the sources of documents stay.
func TestOrphanedSourcesCollected(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_ORPHAN_GRACE": "1ms", "INTAKE_ORPHAN_INTERVAL": "100ms"})
	ctx := t.Context()
	kept := b.create(orderPDF("O-1", nil), docOpts{}) // committed: its source stays
	orphans := []string{objectstore.SourceKey(uuid.NewString(), time.Now()), objectstore.SourceKey(uuid.NewString(), time.Now())}
	for _, key := range orphans {
		require.NoError(t, b.objects.Store.Put(ctx, key, bytes.NewReader([]byte("%PDF-orphan")), 11, "application/pdf"))
	}
	inst := b.start(func(d *processor.Deps) { d.Objects = b.objects.Store }) // the S3 store itself: it can list
	waitFor(t, 20*time.Second, func() error {
		c, err := b.st.OrphansRemoved(ctx)
		if err != nil {
			return err
		}
		if c.Total != len(orphans) {
			return fmt.Errorf("%d orphans removed, want %d", c.Total, len(orphans))
		}
		return nil
	})
	for _, key := range orphans {
		_, err := b.objects.Store.Get(ctx, key)
		require.Equal(t, document.ENOTFOUND, document.ErrorKind(err), "orphan %s removed", key)
	}
	rc, err := b.objects.Store.Get(ctx, kept.SourceKey)
	require.NoError(t, err, "a document's source is never an orphan")
	rc.Close()
	c, err := b.st.OrphansRemoved(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, c.LastDay)
	n, err := testutil.GatherAndCount(inst.reg, "docintake_processor_orphans_removed_total")
	require.NoError(t, err)
	require.Equal(t, 1, n, "the metric is registered")
	mfs, err := inst.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "docintake_processor_orphans_removed_total" {
			require.Equal(t, 2.0, mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
}
