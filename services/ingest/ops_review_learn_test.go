package ingest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/orderflags"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/ingest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// Learning from a review on the console's page (issue 27): the forms that
// draft, push and map, their CSRF and client rules, and the marks of the
// fields. The whole flows run in a browser in services/systemtest
// (review_learn_browser_test.go).

// heldWithUnit is reviewPDF held document_id_missing, read with its second
// line in "Bund", a unit neither the client's table nor the built-in
// spellings know.
func (b *reviewBundle) heldWithUnit(t *testing.T, client string) document.Document {
	t.Helper()
	read := readOrder()
	read.Items[1].Unit = "Bund"
	return b.hold(t, client, reviewPDF(), read, document.ReasonDocumentIDMissing, "no order number found (order_id)")
}

// The forms of the draft, its push and the mappings need the session's
// CSRF value in their body, as every console form; without it (or with
// another), or without a session, nothing is drafted, stored or mapped.
func TestReviewLearnFormsNeedCSRF(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	d := b.heldWithUnit(t, "acme")
	cookie := loginAs(t, b.url, opsToken)
	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, "", nil, "Cookie", cookie))
	form := formOf(page)
	require.Equal(t, "Bund", form.Get("map-0-key"), "the unknown unit's inputs are part of the page's form")
	form.Set("map", "0")
	form.Set("map-0-code", "BE")
	push := url.Values{"name": {"gen-order"}, "scope": {"client"}, "content": {reviewTemplate}, "expect": {"{}"}}
	for action, f := range map[string]url.Values{"draft": form, "map": form, "draft/push": push} {
		for _, value := range []string{"", "forged"} {
			g := url.Values{}
			for k, v := range f {
				g[k] = v
			}
			g.Set("csrf", value)
			res := opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/"+action, "", g, "Cookie", cookie)
			require.Equal(t, http.StatusForbidden, res.StatusCode, "%s with csrf %q", action, value)
		}
		res := opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/"+action, "", f)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "%s without a session", action)
	}
	rows, err := b.st.Units(t.Context(), "acme", nil, true)
	require.NoError(t, err)
	require.Empty(t, rows, "no refused form mapped the unit")
	_, err = b.st.Template(t.Context(), "acme", "gen-order")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err), "no refused form pushed a template")

	res := opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/map", "", form, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, "the page's own form maps")
	require.Contains(t, readBody(t, res), "Added for client acme")
	rows, err = b.st.Units(t.Context(), "acme", nil, true)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, []string{"Bund", "BE", "1"}, []string{rows[0].Unit, rows[0].Code, rows[0].Factor})
}

// On a held document's page an unknown unit is shown at the item row that
// prints it; adding it keeps the values the person corrected, records the
// entry and the operator on the history, and the row is gone.
func TestReviewMapUnitOnHeldPage(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	addOperator(t, b.st, "dora", "dio_dora-review-token-0123")
	d := b.heldWithUnit(t, "acme")
	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, opsToken, nil))
	require.Regexp(t, `<tr class="item" id="item-1"[^>]*>(?s:.*?)</tr>\s*<tr class="mapping" id="map-0" data-line="2">`, page,
		"the unit's inputs follow the row that prints it")
	form := formOf(page)
	form.Set("order_id", "G-4711")
	form.Set("map", "0")
	form.Set("map-0-code", "bundle?") // not a unit of the 2005 list
	res := opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/map", "dio_dora-review-token-0123", form)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, readBody(t, res), "is not a unit of the BMEcat 2005 list")

	form.Set("map-0-code", "BE")
	form.Set("map-0-factor", "1")
	res = opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/map", "dio_dora-review-token-0123", form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	after := readBody(t, res)
	require.Contains(t, after, `name="order_id" value="G-4711"`, "the person's correction stays")
	require.NotContains(t, after, `id="map-0"`, "the unit is known now")
	ev := lastEvent(t, b.st, d.ID)
	require.Equal(t, "operator:dora", ev.Actor)
	require.Equal(t, `unit "Bund" → 1 × BE added to the unit table of client acme`, ev.Detail)
	require.Equal(t, document.StateProcessedRejected, docState(t, b.st, d.ID), "still held: approved by the person")
}

// An operator limited to acme cannot draft, push or map for globex's
// document (404, as for a document that does not exist), and for acme's
// it is offered, and may push to, the client's scope only.
func TestReviewLearnOperatorLimited(t *testing.T) {
	t.Parallel()
	requirePoppler(t) // the draft reads the PDF with pdftotext
	b := setupReview(t, pdftext.RenderOptions{})
	const token = "dio_erin-review-token-0123"
	addOperator(t, b.st, "erin", token, "acme")
	mine, theirs := b.heldWithUnit(t, "acme"), b.heldWithUnit(t, "globex")
	form := formOf(readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+mine.LogID, token, nil)))
	form.Set("order_id", "G-4711")
	form.Set("map", "0")
	form.Set("map-0-code", "BE")
	push := url.Values{"name": {"gen-order"}, "scope": {"client"}, "content": {reviewTemplate}, "expect": {"{}"}}
	for action, f := range map[string]url.Values{"draft": form, "map": form, "draft/push": push} {
		res := opsRequest(t, "POST", b.url+"/ops/review/"+theirs.LogID+"/"+action, token, f)
		require.Equal(t, http.StatusNotFound, res.StatusCode, action)
		require.Contains(t, readBody(t, res), "document "+theirs.LogID+" not found")
	}
	rows, err := b.st.Units(t.Context(), "globex", nil, true)
	require.NoError(t, err)
	require.Empty(t, rows)
	require.Equal(t, document.StateProcessedRejected, docState(t, b.st, theirs.ID))

	res := opsRequest(t, "POST", b.url+"/ops/review/"+mine.LogID+"/draft", token, form)
	require.Equal(t, http.StatusOK, res.StatusCode)
	draftPage := readBody(t, res)
	require.Contains(t, draftPage, `id="push-client"`, "the client's scope is offered")
	require.NotContains(t, draftPage, `id="push-global"`, "the global one is not")

	push.Set("scope", "global")
	res = opsRequest(t, "POST", b.url+"/ops/review/"+mine.LogID+"/draft/push", token, push)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, readBody(t, res), "pushes templates of those clients only")
	_, err = b.st.Template(t.Context(), "", "gen-order")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err), "nothing pushed")
}

// What failed is marked red at its field and what the order's checks
// flagged (a price off the client's price list) yellow; a field with
// neither has no mark.
func TestReviewFieldMarks(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	d := b.heldGenOrder(t, "acme")
	rd, err := lifecycle.Review{Store: b.st, Objects: b.objs}.Held(t.Context(), d)
	require.NoError(t, err)
	rd.Result.Flags = []resultjson.Flag{{Kind: orderflags.KindPrice, Line: 2, Position: "", Article: "NUT-2", Expected: "0.20",
		Printed: "0.25", Message: "line 2 (NUT-2): price 0.25 printed, the price list says 0.20"}}
	require.NoError(t, lifecycle.PutReading(t.Context(), b.objs, d, rd))

	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, opsToken, nil))
	require.Regexp(t, `<span class="mark err" id="f-order_id-err" title="missing: no order number found`, page)
	require.Contains(t, page, `<span class="mark warn" id="f-i1-unit_price-warn" title="line 2 (NUT-2): price 0.25 printed, the price list says 0.20"`)
	require.Contains(t, page, `<td class="warned">`, "the flagged cell is yellow")
	require.NotContains(t, page, `id="f-i0-unit_price-warn"`)
	require.NotContains(t, page, `id="f-i0-unit_price-err"`)
}

func lastEvent(t *testing.T, st *store.Store, documentID string) document.Event {
	t.Helper()
	evs, err := st.Events(t.Context(), documentID)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	return evs[len(evs)-1]
}

// genOrderExpect is the sample JSON of reviewPDF as the gen-order template
// reads it: order G-4711 of 2026-02-03 in EUR, bolts 10 × 1.50 = 15.00
// and nuts 20 × 0.25 = 5.00 (the template reads no totals); positions 1
// and 2 and the remark of lines without a unit as docs/templates.md gives
// them (the default of position; default_unit).
func genOrderExpect(t *testing.T) string {
	t.Helper()
	o := readOrder()
	o.ID, o.Totals = "G-4711", order.Totals{}
	o.Items[0].Position, o.Items[1].Position = "1", "2"
	o.Remarks = []string{"No unit printed: every quantity is written in pieces (C62)"}
	b, err := json.Marshal(catalogue.OrderSample{Order: resultjson.OrderOf(&o)})
	require.NoError(t, err)
	return string(b)
}

// A draft pushed from the page goes through the template API's checks:
// a template that does not read its sample is refused with the failing
// sample shown and nothing stored; one that reads it becomes the client's
// template v1, pushed by the operator, with an event on the document; the
// document's client's template change rate counts every push, refused
// ones too (429 with Retry-After), and a template over
// INTAKE_TEMPLATE_MAX_BYTES is refused with 413.
func TestReviewDraftPushChecksAndLimits(t *testing.T) {
	t.Parallel()
	requirePoppler(t) // the samples are read with pdftotext
	b := setupReview(t, pdftext.RenderOptions{}, func(srv *ingest.Server, st *store.Store) {
		srv.EnableTemplateChangeRateLimit(2, time.Hour, st, prometheus.NewRegistry())
	})
	d := b.heldGenOrder(t, "acme")
	push := url.Values{"name": {"gen-order"}, "scope": {"client"}, "expect": {genOrderExpect(t)}, "if_client": {"0"},
		"content": {strings.Replace(reviewTemplate, `Order no\.`, `Order number`, 1)}}
	pushURL := b.url + "/ops/review/" + d.LogID + "/draft/push"
	res := opsRequest(t, "POST", pushURL, opsToken, push)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	page := readBody(t, res)
	require.Contains(t, page, "Not pushed: 1 of 1 samples failed; nothing stored")
	require.Regexp(t, `<strong>FAIL</strong> review-`+d.LogID+`\.pdf<ul><li>[^<]*document_id_missing`, page, "the failing sample and why")
	_, err := b.st.Template(t.Context(), "acme", "gen-order")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))

	push.Set("content", reviewTemplate)
	res = opsRequest(t, "POST", pushURL, opsToken, push)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, readBody(t, res))
	require.Equal(t, "/ops/review/"+d.LogID+"?done=pushed", res.Header.Get("Location"))
	v, err := b.st.TemplateVersion(t.Context(), "acme", "gen-order", 0)
	require.NoError(t, err)
	require.Equal(t, []any{1, "operator:ops-console", false, 2}, []any{v.Version, v.PushedBy, v.Forced, len(v.Samples)})
	require.Equal(t, "drafted template pushed as gen-order v1 (client acme): 1 samples pass (review-"+d.LogID+".pdf)",
		lastEvent(t, b.st, d.ID).Detail)

	push.Set("content", reviewTemplate+strings.Repeat("# padding\n", 30000))
	res = opsRequest(t, "POST", pushURL, opsToken, push)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "the third change within the hour")
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.Contains(t, readBody(t, res), "Not pushed: more than 2 template changes in 1h0m0s")

	other := b.heldGenOrder(t, "globex") // a client of its own rate
	res = opsRequest(t, "POST", b.url+"/ops/review/"+other.LogID+"/draft/push", opsToken, push)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	require.Contains(t, readBody(t, res), "Not pushed: the template exceeds 262144 bytes")
}
