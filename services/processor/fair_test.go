package processor_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

// One client floods the queue; another client's documents, queued behind
// the flood, are worked on in turn with it instead of after it. One worker,
// so the order of the processor's first state changes is the order of work:
// the calm client's two documents are among the first five of fourteen (in
// stream order they would be the last two).
func TestFloodingClientDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_CONCURRENCY": "1"})
	require.NoError(t, b.st.UpsertClient(t.Context(), document.Client{ID: "calm", Name: "Calm", WebhookURL: "http://127.0.0.1:1/hook", WebhookEnabled: true}))
	b.addArticles()
	var docs []document.Document
	for i := range 12 {
		docs = append(docs, b.create(orderPDF(fmt.Sprintf("F-%d", i), nil), docOpts{}))
	}
	calm := []document.Document{
		b.create(orderPDF("C-1", nil), docOpts{client: "calm"}),
		b.create(orderPDF("C-2", nil), docOpts{client: "calm"}),
	}
	docs = append(docs, calm...)
	b.flush() // every job is queued before the processor starts
	b.start()

	// The id of each document's first event written by the processor.
	first := map[string]int64{}
	waitFor(t, 60*time.Second, func() error {
		for _, d := range docs {
			if _, ok := first[d.ID]; ok {
				continue
			}
			for _, e := range b.events(d) {
				if e.Actor == "processor" {
					first[d.ID] = e.ID
					break
				}
			}
		}
		if len(first) < len(docs) {
			return fmt.Errorf("%d of %d documents worked on", len(first), len(docs))
		}
		return nil
	})
	order := make([]string, 0, len(docs))
	for _, d := range docs {
		order = append(order, d.ID)
	}
	slices.SortFunc(order, func(a, b string) int { return int(first[a] - first[b]) })
	for _, d := range calm {
		require.Less(t, slices.Index(order, d.ID), 5, "a calm client's document waited behind the flood")
	}
}
