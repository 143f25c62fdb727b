package ingest

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/store"
)

// processJob is the outbox row announcing d to the processors; it carries
// the upload's trace context for the relay to publish as NATS headers.
func processJob(ctx context.Context, prefix string, d document.Document, now time.Time) store.OutboxRow {
	return lifecycle.Outbox(ctx, jobs.Process(prefix, d, 1, now))
}
