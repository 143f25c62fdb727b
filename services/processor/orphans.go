package processor

import (
	"context"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// lister is an object store that can list keys (objectstore.S3 and FS).
type lister interface {
	List(ctx context.Context, prefix string, fn func(objectstore.Object) error) error
	Delete(ctx context.Context, key string) error
}

// orphanCollector removes source objects that no document refers to: ingest
// writes the PDF first and commits the document after, so an upload killed
// in between leaves its object behind. An object is an orphan only once it
// is older than grace (an upload may still be committing) and no document
// has it as its source key. Replicas may race on the same orphan; deleting twice is
// harmless and store.RecordOrphanRemoved counts it once.
type orphanCollector struct {
	st      *store.Store
	objects lister
	grace   time.Duration
	log     *zap.Logger
	removed prometheus.Counter
	// done is the cutoff of the last complete collection: every object
	// older than it was examined then (an object written later is younger
	// than that cutoff, unless the object store's clock is more than grace
	// behind). Zero until the first; only run's goroutine uses it.
	done time.Time
}

func newOrphanCollector(st *store.Store, objects any, grace time.Duration, log *zap.Logger, reg *prometheus.Registry) *orphanCollector {
	l, ok := objects.(lister)
	if !ok {
		return nil // an object store that cannot list: nothing to collect with
	}
	c := &orphanCollector{st: st, objects: l, grace: grace, log: log, removed: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "docintake_processor_orphans_removed_total",
		Help: "Source objects removed because no document refers to them (upload killed before its commit).",
	})}
	if reg != nil {
		c.removed = observability.Register(reg, c.removed)
	}
	return c
}

// run collects every interval until ctx is done.
func (c *orphanCollector) run(ctx context.Context, interval time.Duration) error {
	if c == nil {
		return nil
	}
	every(ctx, interval, func() {
		if _, err := c.collect(ctx, time.Now()); err != nil && ctx.Err() == nil {
			c.log.Warn("orphan collection failed", zap.Error(err))
		}
	})
	return nil
}

// orphanDays is how many days of source prefixes the first collection
// lists before the grace period's start (keys carry the upload date, so
// older days hold nothing new once collected).
const orphanDays = 2

// orphanKeySlack is how long before its object's last-modified time a key
// may be dated: the key takes the upload's start time, the object store
// stamps the end of the write (and its clock may be off by a little).
const orphanKeySlack = time.Hour

// collect removes the source objects older than grace that no document
// names. It examines only objects modified since its last complete pass
// (the first examines orphanDays days before the cutoff), and lists only the
// upload-date prefixes that can hold them: usually one day instead of the
// four a full pass lists, and only the new objects are looked up in
// PostgreSQL. It returns how many it removed.
func (c *orphanCollector) collect(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-c.grace)
	from := c.done
	if from.IsZero() {
		from = cutoff.AddDate(0, 0, -orphanDays)
	}
	removed := 0
	var batch []objectstore.Object
	flush := func() error {
		n, err := c.removeUnknown(ctx, batch)
		removed += n
		batch = batch[:0]
		return err
	}
	last := dayStart(cutoff.Add(orphanKeySlack))
	for day := dayStart(from.Add(-orphanKeySlack)); !day.After(last); day = day.AddDate(0, 0, 1) {
		prefix := "sources/" + day.Format("2006/01/02") + "/"
		err := c.objects.List(ctx, prefix, func(o objectstore.Object) error {
			if o.Modified.Before(from) || !o.Modified.Before(cutoff) || !strings.HasSuffix(o.Key, ".pdf") {
				return nil
			}
			batch = append(batch, o)
			if len(batch) == 500 {
				return flush()
			}
			return nil
		})
		if err != nil {
			return removed, err
		}
	}
	if err := flush(); err != nil {
		return removed, err
	}
	c.done = cutoff
	return removed, nil
}

// dayStart is midnight UTC of t's day (source keys carry UTC dates).
func dayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// removeUnknown deletes the objects that are no document's source.
func (c *orphanCollector) removeUnknown(ctx context.Context, objs []objectstore.Object) (int, error) {
	if len(objs) == 0 {
		return 0, nil
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	known, err := c.st.KnownSourceKeys(ctx, keys)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		if known[o.Key] {
			continue
		}
		if err := c.objects.Delete(ctx, o.Key); err != nil {
			return n, err
		}
		first, err := c.st.RecordOrphanRemoved(ctx, o.Key)
		if err != nil {
			return n, err
		}
		if first {
			c.removed.Inc()
			n++
			c.log.Warn("removed orphaned source object", zap.String("key", o.Key), zap.Time("written", o.Modified))
		}
	}
	return n, nil
}
