package processor_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pricing"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// Issue 28's flags through the whole pipeline (PostgreSQL, JetStream, S3).
// The test orders (orderPDF) are dated 2026-02-03 and print B-1 (mapped to
// S-100) at 1.50 and N-2 (S-200) at 0.25 EUR.

const priceHeader = "article,currency,unit_price,price_basis,unit,valid_from,valid_to,tolerance_pct\n"

// prices imports csv (after the header) as the test client's price list
// for buyer ("" for every buyer).
func (b *bundle) prices(buyer, csv string) {
	b.t.Helper()
	_, err := pricing.Import(b.t.Context(), b.st, clientID, buyer, []byte(priceHeader+csv), "test")
	require.NoError(b.t, err)
}

// flagged reads a success's openTRANS (XSD-valid) and result JSON.
func (b *bundle) flagged(d document.Document) (*order.Order, resultjson.File) {
	b.t.Helper()
	xml := b.read(d.ResultPath)
	opentranstest.Validate(b.t.(*testing.T), xml)
	o, err := opentrans.Read(bytes.NewReader(xml))
	require.NoError(b.t, err)
	var res resultjson.File
	require.NoError(b.t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
	return o, res
}

// A price outside the list's tolerance is delivered as success with the
// flag in the line's openTRANS REMARKS and in the result JSON, counted by
// kind and recorded for the document; inside the tolerance, nothing.
func TestFlaggedPriceDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	inst := b.start()
	// S-200 at 0.30 ± 5 %: the printed 0.25 is 16.67 % below; S-100 (B-1)
	// at exactly 1.50.
	b.prices("", "S-200,EUR,0.30,,C62,,,5\nB-1,EUR,1.50,,,,,0\n")

	d := b.waitState(b.upload(orderPDF("FLAG-1", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	o, res := b.flagged(d)
	want := "line 2 (S-200): price 0.25 EUR per C62 is 16.67 % below the price list's 0.30 (tolerance 5 %; price list for every buyer, line 2)"
	require.Empty(t, o.Items[0].Remarks, "B-1 is at its list price")
	require.Equal(t, []string{"docintake flag price: " + want}, o.Items[1].Remarks)
	require.Equal(t, "0.25", o.Items[1].UnitPrice, "never corrected")
	require.Equal(t, []resultjson.Flag{{Kind: "price", Line: 2, Position: "2", Article: "S-200", Expected: "0.30", Printed: "0.25",
		Message: want}}, res.Flags) // positions 1, 2, … as the template numbers unnumbered lines
	require.Equal(t, []string{"docintake flag price: " + want}, res.Order.Items[1].Remarks)
	require.True(t, strings.HasPrefix(b.eventTo(d, document.StateProcessedSuccess), "1 flag: price: "+want+"; "))
	flags, err := b.st.DocumentFlags(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, []store.DocumentFlag{{Seq: 1, Kind: "price", Line: 2, Position: "2", Article: "S-200", Expected: "0.30", Printed: "0.25",
		Message: want}}, flags)
	require.Equal(t, 1.0, gauge(t, inst.reg, "docintake_processor_flags_total", "kind", "price"))
	require.Equal(t, "success", b.deliverJobs(1)[0].GetStatus())

	// 0.26 ± 5 % takes 0.25 (3.85 % below): no flag, no remark, no flags key.
	b.prices("", "S-200,EUR,0.26,,C62,,,5\n")
	d = b.waitState(b.upload(orderPDF("FLAG-2", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	o, res = b.flagged(d)
	require.Empty(t, o.Items[1].Remarks)
	require.Empty(t, res.Flags)
	require.NotContains(t, string(b.read(d.ResultJSONPath)), `"flags"`)
	flags, err = b.st.DocumentFlags(t.Context(), d.ID)
	require.NoError(t, err)
	require.Empty(t, flags)
}

// The entry valid on the order date (2026-02-03) prices the line, and the
// buyer's own list wins over the list for every buyer; an article listed
// with no entry valid then is flagged as not checked.
func TestFlaggedPriceValidity(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()
	b.prices("", "S-200,EUR,0.20,,,,,0\n")
	b.prices("ACME", "S-200,EUR,0.25,,,,2026-01-31,0\nS-200,EUR,0.28,,,2026-02-01,,0\nS-100,EUR,1.50,,,2025-01-01,2025-12-31,0\n")

	d := b.waitState(b.upload(orderPDF("VALID-1", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	_, res := b.flagged(d)
	require.Len(t, res.Flags, 2)
	require.Equal(t, resultjson.Flag{Kind: "price_no_entry", Line: 1, Position: "1", Article: "S-100", Expected: "", Printed: "1.50",
		Message: "line 1 (S-100): price 1.50 EUR not checked: the price list has no entry for EUR per C62 valid on 2026-02-03 (the list has EUR per any unit 2025-01-01..2025-12-31, line 4)"},
		res.Flags[0])
	require.Equal(t, "price", res.Flags[1].Kind)
	require.Equal(t, "0.28", res.Flags[1].Expected, "the buyer's entry valid from 2026-02-01, not January's 0.25 or the general 0.20")
	require.Contains(t, res.Flags[1].Message, "(tolerance 0 %; price list of ACME, line 3)")

	// With January's price valid until the order date, the order is at its
	// price; S-100, which the buyer's list no longer names, falls back to
	// the list for every buyer, which does not name it either: unchecked.
	b.prices("ACME", "S-200,EUR,0.25,,,,2026-02-03,0\nS-200,EUR,0.28,,,2026-02-04,,0\n")
	d = b.waitState(b.upload(orderPDF("VALID-2", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	_, res = b.flagged(d)
	require.Empty(t, res.Flags)
}

// A client that reviews flags has a flagged order held (processed_rejected
// without a reason or deliver job, its reading stored with the flags) and
// an operator's approval delivers it as success with its flags.
func TestFlaggedPriceHeldForReview(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	require.NoError(t, b.st.SetFlagPolicy(t.Context(), clientID, document.FlagsReview))
	b.start()
	b.prices("", "S-200,EUR,0.30,,C62,,,5\n")

	d := b.waitState(b.upload(orderPDF("HOLD-1", nil), docOpts{}), document.StateProcessedRejected, 20*time.Second)
	require.Empty(t, d.StatusReason)
	require.Empty(t, d.ResultPath)
	_, held, err := b.st.ReviewUntil(t.Context(), d.ID)
	require.NoError(t, err)
	require.True(t, held)
	detail := b.eventTo(d, document.StateProcessedRejected)
	require.True(t, strings.HasPrefix(detail, "1 flag: price: line 2 (S-200): price 0.25 EUR per C62 is 16.67 % below the price list's 0.30"), detail)
	require.Contains(t, detail, "held for review until ")
	rd, err := b.review().Held(t.Context(), d)
	require.NoError(t, err)
	require.Len(t, rd.Result.Flags, 1)
	require.Equal(t, "0.30", rd.Result.Flags[0].Expected)

	d, err = b.review().Approve(t.Context(), d, rd.Result.Order, "price agreed by phone", "operator:test")
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, d.State)
	o, res := b.flagged(d)
	require.Len(t, o.Items[1].Remarks, 1)
	require.True(t, strings.HasPrefix(o.Items[1].Remarks[0], "docintake flag price: line 2 (S-200): price 0.25"))
	require.Len(t, res.Flags, 1)
	require.Equal(t, "success", b.deliverJobs(1)[0].GetStatus(), "only the approval delivers")

	// A copy of a delivered PO is its duplicate, not another review.
	require.NoError(t, b.st.SetFlagPolicy(t.Context(), clientID, document.FlagsDeliver))
	first := b.waitState(b.upload(orderPDF("HOLD-2", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	require.NoError(t, b.st.SetFlagPolicy(t.Context(), clientID, document.FlagsReview))
	dup := b.waitState(b.upload(orderPDF("HOLD-2", nil), docOpts{}), document.StateProcessedIgnored, 20*time.Second)
	require.True(t, strings.HasPrefix(b.eventTo(dup, document.StateProcessedIgnored), "duplicate of "+first.LogID+" "))
}

// ordersWithDates is an acme-dates order dated 2026-02-03 (the PO arrives
// now, in 2026 or later) with the header's requested delivery date and line
// N-2's own.
func ordersWithDates(id, header, line string) []byte {
	return orderPDF(id, func(lines []string) []string {
		out := append([]string(nil), lines[:4]...)
		out = append(out, "Deliver by: "+header)
		for _, l := range lines[4:] {
			if strings.HasPrefix(l, "N-2") && line != "" {
				l += "      " + line
			}
			out = append(out, l)
		}
		return out
	})
}

// A requested delivery date before the order date is flagged on the
// order (the header's) or its line; one already past when the PO arrived
// too; a date still ahead is not. Nothing is corrected.
func TestFlaggedDeliveryDates(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()
	opts := docOpts{template: "acme-dates"}

	d := b.waitState(b.upload(ordersWithDates("DATE-1", "2026-02-01", "2026-03-02"), opts), document.StateProcessedSuccess, 20*time.Second)
	o, res := b.flagged(d)
	require.Equal(t, "2026-02-01", o.DeliveryDate.String(), "never corrected")
	arrived := d.CreatedAt.UTC().Format(time.DateOnly)
	before := "the order's requested delivery date 2026-02-01 is before the order date 2026-02-03"
	past := "line 2 (S-200): requested delivery date 2026-03-02 had passed when the order arrived on " + arrived
	require.Equal(t, []resultjson.Flag{
		{Kind: "delivery_date_before_order", Expected: "2026-02-03", Printed: "2026-02-01", Message: before},
		{Kind: "delivery_date_past", Line: 2, Position: "2", Article: "S-200", Expected: arrived, Printed: "2026-03-02", Message: past},
	}, res.Flags)
	require.Contains(t, o.Remarks, "docintake flag delivery_date_before_order: "+before, "the header's flag on the order")
	require.Equal(t, []string{"docintake flag delivery_date_past: " + past}, o.Items[1].Remarks)

	d = b.waitState(b.upload(ordersWithDates("DATE-2", "2099-01-04", ""), opts), document.StateProcessedSuccess, 20*time.Second)
	_, res = b.flagged(d)
	require.Empty(t, res.Flags)
}
