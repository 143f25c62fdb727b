package ingest

import (
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/store"
)

// processJob is the outbox row announcing d to the processors.
func processJob(prefix string, d document.Document, now time.Time) store.OutboxRow {
	m := jobs.Process(prefix, d, 1, now)
	return store.OutboxRow{Subject: m.Subject, MsgID: m.MsgID, Payload: m.Payload}
}
