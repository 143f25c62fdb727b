package processor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// listingFS is the file object store, recording the prefixes listed.
type listingFS struct {
	*objectstore.FS
	prefixes []string
}

func (l *listingFS) List(ctx context.Context, prefix string, fn func(objectstore.Object) error) error {
	l.prefixes = append(l.prefixes, prefix)
	return l.FS.List(ctx, prefix, fn)
}

// After its first pass the collector lists only the upload days that can
// hold objects written since its last complete pass, and examines only
// those objects: an orphan that became old enough meanwhile is removed, one
// examined before is not looked at again, and a pass that fails does not
// move the window.
func TestOrphanCollectionIsIncremental(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, err := store.Open(ctx, storetest.SchemaURL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	fs, err := objectstore.NewFS(t.TempDir())
	require.NoError(t, err)
	objects := &listingFS{FS: fs}
	c := &orphanCollector{st: store.New(pool), objects: objects, grace: time.Hour, log: zaptest.NewLogger(t),
		removed: prometheus.NewCounter(prometheus.CounterOpts{Name: "removed"})}
	put := func(written time.Time) string {
		key := objectstore.SourceKey(uuid.NewString(), written)
		require.NoError(t, fs.Put(ctx, key, bytes.NewReader([]byte("%PDF-orphan")), 11, "application/pdf"))
		require.NoError(t, os.Chtimes(filepath.Join(fs.Root(), filepath.FromSlash(key)), written, written))
		return key
	}
	exists := func(key string) bool {
		_, err := os.Stat(filepath.Join(fs.Root(), filepath.FromSlash(key)))
		return err == nil
	}
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

	old := put(now.Add(-30 * time.Hour))
	young := put(now.Add(-10 * time.Minute))
	n, err := c.collect(ctx, now)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, exists(old))
	require.True(t, exists(young), "younger than grace")
	require.Equal(t, []string{"sources/2026/03/08/", "sources/2026/03/09/", "sources/2026/03/10/"}, objects.prefixes,
		"the first pass covers two days before the cutoff")

	// An object dated before the last cutoff cannot appear after that pass
	// (it was written before it); one planted there shows that the second
	// pass does not examine the first pass's objects again.
	examined := put(now.Add(-2 * time.Hour))
	objects.prefixes = nil
	n, err = c.collect(ctx, now.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, exists(young), "old enough now")
	require.True(t, exists(examined), "before the window")
	require.Equal(t, []string{"sources/2026/03/10/"}, objects.prefixes, "only today's uploads")

	// Around midnight the previous day is listed too.
	late := put(time.Date(2026, 3, 10, 23, 20, 0, 0, time.UTC))
	objects.prefixes = nil
	n, err = c.collect(ctx, time.Date(2026, 3, 11, 0, 30, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, exists(late))
	require.Equal(t, []string{"sources/2026/03/10/", "sources/2026/03/11/"}, objects.prefixes)

	// A pass that fails (here: PostgreSQL gone) leaves the window where it
	// was, so the next one examines its objects again.
	missed := put(time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC))
	done := c.done
	pool.Close()
	_, err = c.collect(ctx, time.Date(2026, 3, 11, 1, 30, 0, 0, time.UTC))
	require.Error(t, err)
	require.Equal(t, done, c.done)
	require.True(t, exists(missed))
}
