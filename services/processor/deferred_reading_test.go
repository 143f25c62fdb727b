package processor_test

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/stretchr/testify/require"
)

// A document deferred for an unknown unit keeps what was read beside its
// results (lifecycle.ReadingKey), so the console's review page can show
// the unit at the line that prints it: the order as read, the reason and
// the deferral's detail.
func TestDeferredKeepsReading(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_RETRY_SCHEDULE": "1h"})
	b.start()
	d := b.upload(unitsPDF("U-7",
		"B-1      Bolts      2    Bund   15.00     30.00",
		"N-2      Nuts       3    Stk    0.50      1.50",
	), docOpts{template: "acme-units"})
	d = b.waitState(d, document.StateDeferredForRetry, 30*time.Second)
	rc, err := b.objects.Get(t.Context(), lifecycle.ReadingKey(d))
	require.NoError(t, err)
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	require.NoError(t, err)
	var rd lifecycle.Reading
	require.NoError(t, json.Unmarshal(raw, &rd))
	require.Equal(t, document.ReasonMappingNotResolved, rd.Reason)
	require.Contains(t, rd.Detail, `no unit mapping for "Bund" (line 1, position 1)`)
	require.Len(t, rd.Canonical.Items, 2)
	require.Equal(t, []string{"B-1", "2", "Bund"}, []string{rd.Canonical.Items[0].BuyerArticleID, rd.Canonical.Items[0].Quantity,
		rd.Canonical.Items[0].Unit}, "as printed, not converted")
	require.Equal(t, "U-7", rd.Result.Order.OrderID)
}
