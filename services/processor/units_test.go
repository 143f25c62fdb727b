package processor_test

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/units"
	"github.com/stretchr/testify/require"
)

// unitsPDF is an order of the acme-units test template: article,
// description, quantity, unit, unit price, line amount.
func unitsPDF(id string, lines ...string) []byte {
	return pdfLines(append(append([]string{
		"ACME Units           Purchase Order",
		"Order no. " + id,
		"Date: 2026-02-03",
		"Items",
	}, lines...), "Total "+unitsTotal(lines)))
}

// unitsTotal adds up the lines' printed amounts (the last column), as the
// PO prints its total.
func unitsTotal(lines []string) string {
	sum := new(big.Rat)
	for _, l := range lines {
		f := strings.Fields(l)
		sum.Add(sum, order.Rat(f[len(f)-1]))
	}
	return sum.FloatString(2)
}

// putUnits stores rows of the client's unit table as intakectl units import
// does.
func (b *bundle) putUnits(rows ...[4]string) {
	b.t.Helper()
	var out []store.UnitRow
	for _, r := range rows {
		rule, err := units.NewRule(r[0], r[1], r[2], r[3])
		require.NoError(b.t, err)
		out = append(out, store.UnitRow{Unit: rule.Unit, UnitKey: units.Key(rule.Unit), Article: rule.Article,
			ArticleKey: units.ArticleKey(rule.Article), Code: rule.Code, Factor: rule.Factor})
	}
	require.NoError(b.t, b.st.PutUnits(b.t.Context(), clientID, out, false))
}

// Issue 28: the buyer orders cases of 12 where the supplier sells pieces.
// Through the whole pipeline the client's unit table converts the line (2 CS
// at 120.00 → 24 C62 at 10.00, the line amount 240.00 unchanged), a row for
// one article wins over the row for every article (where 100.00 ÷ 6 is no
// exact decimal, the price stays per 6 pieces), a built-in spelling (Stk) is
// written as its Rec 20 code, and the openTRANS is XSD-valid.
func TestUnitTableConvertsThroughPipeline(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.putUnits([4]string{"CS", "", "PCE", "12"}, [4]string{"CS", "W-3", "C62", "6"})
	b.start()

	d := b.waitState(b.upload(unitsPDF("U-1",
		"B-1      Bolts      2    CS     120.00    240.00",
		"N-2      Nuts       3    Stk    0.50      1.50",
		"W-3      Washers    1    CS     100.00    100.00",
	), docOpts{template: "acme-units"}), document.StateProcessedSuccess, 30*time.Second)

	xml := b.read(d.ResultPath)
	opentranstest.Validate(t, xml)
	require.Equal(t, []string{"24", "3", "6"}, xmlTexts(t, xml, "ORDER_ITEM", "QUANTITY"))
	require.Equal(t, []string{"C62", "C62", "C62"}, xmlTexts(t, xml, "ORDER_ITEM", "ORDER_UNIT"))
	require.Equal(t, []string{"240.00", "1.50", "100.00"}, xmlTexts(t, xml, "ORDER_ITEM", "PRICE_LINE_AMOUNT"),
		"the line amounts as printed")
	o, err := opentrans.Read(strings.NewReader(string(xml)))
	require.NoError(t, err)
	want := []struct{ price, basis, amount string }{{"10.00", "1", "240.00"}, {"0.50", "1", "1.50"}, {"100.00", "6", "100.00"}}
	for i, it := range o.Items {
		require.Zero(t, order.Rat(want[i].price).Cmp(order.Rat(it.UnitPrice)), "line %d price %s", i+1, it.UnitPrice)
		require.Zero(t, order.Rat(want[i].basis).Cmp(basisOf(it.PriceBasisQuantity)), "line %d basis %q", i+1, it.PriceBasisQuantity)
		// The invariant: quantity × price ÷ price basis is the printed line amount.
		v := new(big.Rat).Mul(order.Rat(it.Quantity), order.Rat(it.UnitPrice))
		require.Zero(t, v.Quo(v, basisOf(it.PriceBasisQuantity)).Cmp(order.Rat(want[i].amount)), "line %d", i+1)
	}
	require.Contains(t, o.Items[0].Remarks,
		"Ordered as printed: 2 CS at 120.00; converted by the client's unit table: 1 CS = 12 C62", "the ERP sees the conversion")

	var res resultjson.File
	require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
	items := res.Order.Items
	require.Equal(t, [3]string{"24", "C62", "10.00"}, [3]string{items[0].Quantity, items[0].Unit, items[0].UnitPrice},
		"the result JSON says what the openTRANS says")
	require.Equal(t, &resultjson.PrintedUnit{Quantity: "2", Unit: "CS", UnitPrice: "120.00", Factor: "12", Table: "client"}, items[0].AsPrinted)
	require.Equal(t, &resultjson.PrintedUnit{Quantity: "3", Unit: "Stk", UnitPrice: "0.50", Factor: "1", Table: "builtin"}, items[1].AsPrinted)
	require.Equal(t, &resultjson.PrintedUnit{Quantity: "1", Unit: "CS", UnitPrice: "100.00", Factor: "6", Table: "client"}, items[2].AsPrinted)
}

// Issue 28: a unit neither the client's table nor the built-in spellings
// know is not guessed: the document is deferred with mapping_not_resolved
// (the client is told deferred_for_retry), the history names the unit, and
// once ops add it to the unit table the next retry delivers the order in it.
func TestUnknownUnitDeferredThenResolved(t *testing.T) {
	t.Parallel()
	// Thirty short retries: the next one picks the new unit up soon after
	// it is added, and they last long enough (9 s) that the checks made
	// while the document waits do not race the dlq on a loaded machine.
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_RETRY_SCHEDULE": strings.TrimSuffix(strings.Repeat("300ms,", 30), ",")})
	b.start()
	d := b.upload(unitsPDF("U-2",
		"B-1      Bolts      2    Bund   15.00     30.00",
		"N-2      Nuts       3    Stk    0.50      1.50",
	), docOpts{template: "acme-units"})
	d = b.waitState(d, document.StateDeferredForRetry, 30*time.Second)
	require.Equal(t, document.ReasonMappingNotResolved, d.StatusReason)
	require.Equal(t, "deferred_for_retry", b.deliverJobs(1)[0].GetStatus())
	detail := b.eventTo(d, document.StateDeferredForRetry)
	require.Contains(t, detail, `no unit mapping for "Bund" (line 1, position 1)`)
	require.Empty(t, d.ResultPath, "nothing is delivered in a guessed unit")

	b.putUnits([4]string{"Bund", "", "BE", "1"}) // ops add the unit: the next attempt succeeds
	d = b.waitState(d, document.StateProcessedSuccess, 30*time.Second)
	require.Empty(t, d.StatusReason)
	xml := b.read(d.ResultPath)
	opentranstest.Validate(t, xml)
	require.Equal(t, []string{"BE", "C62"}, xmlTexts(t, xml, "ORDER_ITEM", "ORDER_UNIT"))
	require.Equal(t, []string{"2", "3"}, xmlTexts(t, xml, "ORDER_ITEM", "QUANTITY"))
}

// An unknown unit that nobody adds ends in dlq when the retry schedule is
// used up, with the reason kept, as a missing mapping does.
func TestUnknownUnitExhaustedToDLQ(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_RETRY_SCHEDULE": "100ms,100ms"})
	b.start()
	d := b.upload(unitsPDF("U-3", "B-1      Bolts      2    Bund   15.00     30.00"), docOpts{template: "acme-units"})
	d = b.waitState(d, document.StateDLQ, 30*time.Second)
	require.Equal(t, document.ReasonMappingNotResolved, d.StatusReason)
	require.Equal(t, []document.State{document.StateReceived, document.StateDeferredForRetry, document.StateDeferredForRetry,
		document.StateDLQ}, transitions(b.events(d)))
	require.Contains(t, b.eventTo(d, document.StateDLQ), `"Bund"`)
}

// An order approved in review takes the same step before it is rendered:
// an unknown unit refuses the approval with the processor's reason, and once
// the unit is in the table the approved line is converted.
func TestReviewApprovalConvertsUnits(t *testing.T) {
	t.Parallel()
	b, d, r, rd := approvable(t)
	fixed := rd.Result.Order
	fixed.Items = append([]resultjson.Item(nil), fixed.Items...)
	fixed.OrderID = "PO-U1"
	fixed.Items[0].Unit, fixed.Items[0].LineAmount = "Bund", "15.00" // 10 × 1.50
	_, err := r.Approve(t.Context(), d, fixed, "", "operator:alice")
	var coded *document.Error
	require.ErrorAs(t, err, &coded)
	require.Equal(t, "mapping_not_resolved", coded.Code)
	require.ErrorContains(t, err, `"Bund"`)
	cur, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedRejected, cur.State, "a refused approval changes nothing")

	b.putUnits([4]string{"Bund", "", "C62", "10"})
	got, err := r.Approve(t.Context(), d, fixed, "", "operator:alice")
	require.NoError(t, err)
	xml := b.read(got.ResultPath)
	opentranstest.Validate(t, xml)
	o, err := opentrans.Read(strings.NewReader(string(xml)))
	require.NoError(t, err)
	it := o.Items[0]
	require.Equal(t, [4]string{"100", "C62", "0.15", "15.00"}, [4]string{it.Quantity, it.Unit, it.UnitPrice, it.LineAmount},
		"10 bundles of 10 at 1.50 are 100 pieces at 0.15, the line still 15.00")
}

// basisOf is a price basis as openTRANS means it: none is 1.
func basisOf(s string) *big.Rat {
	if r := order.Rat(s); r != nil && r.Sign() != 0 {
		return r
	}
	return big.NewRat(1, 1)
}
