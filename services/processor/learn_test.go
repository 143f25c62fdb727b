package processor_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// waitDeferredFor polls until d's last deferral names the mapping entry
// it waits for (`no article mapping for "KEY"`).
func (b *bundle) waitDeferredFor(d document.Document, key string) {
	b.t.Helper()
	want := fmt.Sprintf("no article mapping for %q", key)
	waitFor(b.t, 20*time.Second, func() error {
		ev := b.events(d)
		for i := len(ev) - 1; i >= 0; i-- {
			if ev[i].To == document.StateDeferredForRetry {
				if strings.Contains(ev[i].Detail, want) {
					return nil
				}
				return fmt.Errorf("last deferral: %s", ev[i].Detail)
			}
		}
		return fmt.Errorf("not deferred yet")
	})
}

// The mapping feed of issue 27: an order waiting for its article mappings
// (retry schedule of an hour) is processed again as soon as a reviewer
// maps each article, and delivered as a success with the mapped numbers;
// an order waiting for another article is left to its schedule; the next
// order with those articles goes straight through. Each entry is on the
// reviewed document's history with the operator.
func TestReviewMappingFeedResolvesDeferred(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_RETRY_SCHEDULE": "1h,1h,1h"})
	b.start()
	ctx := t.Context()
	d := b.upload(orderPDF("M-7", nil), docOpts{})
	other := b.upload(orderPDF("M-8", func(l []string) []string {
		l[5] = strings.Replace(l[5], "B-1", "Q-9", 1)
		return l
	}), docOpts{})
	b.waitDeferredFor(d, "B-1")
	b.waitDeferredFor(other, "Q-9")

	r := b.review()
	added, err := r.AddMapping(ctx, d, store.Mapping{Kind: "article", Key: "B-1", Value: "S-100"}, "operator:carol")
	require.NoError(t, err)
	require.False(t, added.Replaced)
	require.Len(t, added.Retried, 1)
	require.Equal(t, d.ID, added.Retried[0].ID, "only the order waiting for B-1")
	b.flush()
	b.waitDeferredFor(d, "N-2") // its next article, well before its hour
	added, err = r.AddMapping(ctx, d, store.Mapping{Kind: "article", Key: "N-2", Value: "S-200"}, "operator:carol")
	require.NoError(t, err)
	require.Len(t, added.Retried, 1)
	b.flush()
	d = b.waitState(d, document.StateProcessedSuccess, 30*time.Second)
	o, err := opentrans.Read(strings.NewReader(string(b.read(d.ResultPath))))
	require.NoError(t, err)
	require.Equal(t, "S-100", o.Items[0].SupplierArticleID)
	require.Equal(t, "S-200", o.Items[1].SupplierArticleID)
	ev := b.events(d)
	require.True(t, hasEvent(ev, "operator:carol", `mapping article "B-1" → "S-100" added for client `+clientID))
	require.True(t, hasEvent(ev, "operator:carol", `mapping article "N-2" → "S-200" added for client `+clientID))
	require.True(t, hasEvent(ev, "operator:carol", "processed again now"))

	got, err := b.st.Document(ctx, other.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateDeferredForRetry, got.State, "Q-9 is still unknown")
	require.False(t, hasEvent(b.events(other), "operator:carol", ""), "left to its schedule")

	next := b.waitState(b.upload(orderPDF("M-9", nil), docOpts{}), document.StateProcessedSuccess, 30*time.Second)
	require.Equal(t, []document.State{document.StateReceived, document.StateProcessedSuccess}, transitions(b.events(next)))

	_, err = r.AddMapping(ctx, d, store.Mapping{Kind: "article", Key: " "}, "operator:carol")
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
}
