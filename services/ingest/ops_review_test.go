package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"html"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/services/ingest"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// The console's review pages (issue 27) on documents held as the
// processor holds them: the reading stored beside the results and the
// document in processed_rejected with review_until set.

// reviewTemplate reads the order of reviewPDF (gen-order's layout); its
// checks are the defaults: every line amount, the net total.
const reviewTemplate = `issuer: Generated Buyer
keywords: [GENERATED ORDER]
fields:
  order_id: {parser: regex, regex: 'Order no\. (\S+)'}
  date: {parser: regex, regex: 'Date: (\d{4}-\d{2}-\d{2})', type: date}
  currency: {parser: static, value: EUR}
  lines:
    parser: lines
    start: Items
    end: Total
    line: '^\s*(?P<supplier_article_id>[A-Z]+-\d+)\s+(?P<description>.+?)\s+(?P<quantity>\d+)\s+(?P<unit_price>\d+\.\d\d)\s+(?P<line_amount>\d+\.\d\d)\s*$'
docintake:
  name: gen-order
`

// reviewPDF prints order G-4711: bolts 10 × 1.50 = 15.00 and nuts 20 ×
// 0.25 = 5.00, total 20.00.
func reviewPDF() []byte {
	return pdftexttest.Build(pdftexttest.Page{Texts: []pdftexttest.Text{
		{X: 72, Y: 72, Size: 14, S: "GENERATED ORDER"},
		{X: 72, Y: 100, S: "Order no. G-4711"}, {X: 72, Y: 114, S: "Date: 2026-02-03"},
		{X: 72, Y: 150, S: "Items"},
		{X: 72, Y: 170, S: "BOLT-1"}, {X: 150, Y: 170, S: "Bolts M8"}, {X: 300, Y: 170, S: "10"}, {X: 360, Y: 170, S: "1.50"}, {X: 450, Y: 170, S: "15.00"},
		{X: 72, Y: 184, S: "NUT-2"}, {X: 150, Y: 184, S: "Nuts M8"}, {X: 300, Y: 184, S: "20"}, {X: 360, Y: 184, S: "0.25"}, {X: 450, Y: 184, S: "5.00"},
		{X: 360, Y: 220, S: "Total"}, {X: 450, Y: 220, S: "20.00"},
	}})
}

// readOrder is reviewPDF as a template that missed the order number read
// it.
func readOrder() order.Order {
	return order.Order{Type: order.TypeOrder, IssueDate: order.Date{Year: 2026, Month: 2, Day: 3}, Currency: "EUR",
		Items: []order.Item{
			{SupplierArticleID: "BOLT-1", Description: "Bolts M8", Quantity: "10", UnitPrice: "1.50", LineAmount: "15.00"},
			{SupplierArticleID: "NUT-2", Description: "Nuts M8", Quantity: "20", UnitPrice: "0.25", LineAmount: "5.00"},
		},
		Totals: order.Totals{NetAmount: "20.00"}}
}

type reviewBundle struct {
	*opsBundle
	objs objectstore.Store
	tpl  *template.Template // every document's pinned template
}

// setupReview serves the console with its review pages (render limits
// render), clients acme and globex holding for review, and the
// gen-order template as every document's pinned version; opts run on the
// server before the console is enabled (rate limits).
func setupReview(t *testing.T, render pdftext.RenderOptions, opts ...func(*ingest.Server, *store.Store)) *reviewBundle {
	t.Helper()
	st, js, qcfg, objs := consoleServers(t, document.Client{Review: document.ReviewHold})
	tpl, err := catalogue.CompileVersion("gen-order", "gen-order.yml", []byte(reviewTemplate))
	require.NoError(t, err)
	require.True(t, tpl.DocIntake.Checks.LineAmount && tpl.DocIntake.Checks.NetTotal, "the default checks are on")
	set, err := template.NewSet(tpl)
	require.NoError(t, err)
	v := &catalogue.Version{TemplateID: 1, Name: "gen-order", Number: 1, Template: tpl, Set: set}
	review := lifecycle.Review{Store: st, Objects: objs, Prefix: qcfg.SubjectPrefix,
		Pinned: func(context.Context, string) (*catalogue.Version, error) { return v, nil }}
	srv := ingest.New(ingest.Config{SubjectPrefix: qcfg.SubjectPrefix}, st, objs, templates{"gen-order": nil},
		zaptest.NewLogger(t), prometheus.NewRegistry(), observability.NewHealth())
	for _, o := range opts {
		o(srv, st)
	}
	srv.EnableOps(ingest.OpsConfig{Token: opsToken, Stream: qcfg.Stream, Refresh: 10 * time.Minute,
		Review: &ingest.ReviewConfig{Review: review, Render: render}}, st, js)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &reviewBundle{opsBundle: &opsBundle{url: hs.URL, st: st, js: js, qcfg: qcfg}, objs: objs, tpl: tpl}
}

// hold stores pdf as client's upload and holds it for review as the
// processor does, with read as what was read and reason as the rejection.
func (b *reviewBundle) hold(t *testing.T, client string, pdf []byte, read order.Order, reason document.Reason, detail string) document.Document {
	t.Helper()
	ctx := t.Context()
	logID := uuid.NewString()
	now := time.Now()
	key := objectstore.SourceKey(logID, now)
	require.NoError(t, b.objs.Put(ctx, key, bytes.NewReader(pdf), int64(len(pdf)), "application/pdf"))
	d := document.Document{ID: uuid.NewString(), LogID: logID, ClientID: client, MessageID: "m-" + logID,
		FileSHA256: make([]byte, 32), FileSize: int64(len(pdf)), Filename: "po.pdf", Subject: "PO",
		Template: "gen-order", SourceKey: key, SourcePath: b.objs.URI(key)}
	d, created, err := b.st.CreateDocument(ctx, d, jobs.Process(b.qcfg.SubjectPrefix, d, 1, now))
	require.NoError(t, err)
	require.True(t, created)
	rd := lifecycle.Reading{Reason: reason, Detail: detail, Canonical: read,
		Result: resultjson.File{LogID: d.LogID, MessageID: d.MessageID, Template: d.Template, TemplateVersion: 1,
			Order: resultjson.OrderOf(&read)}}
	require.NoError(t, lifecycle.PutReading(ctx, b.objs, d, rd))
	d, err = b.st.HoldForReview(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived,
		To: document.StateProcessedRejected, Reason: &reason, Actor: "processor", Detail: detail}, now.Add(time.Hour))
	require.NoError(t, err)
	return d
}

// heldGenOrder is reviewPDF held document_id_missing.
func (b *reviewBundle) heldGenOrder(t *testing.T, client string) document.Document {
	t.Helper()
	return b.hold(t, client, reviewPDF(), readOrder(), document.ReasonDocumentIDMissing, "no order number found (order_id)")
}

var (
	inputTag   = regexp.MustCompile(`<input [^>]*>`)
	inputName  = regexp.MustCompile(`\sname="([^"]+)"`)
	inputValue = regexp.MustCompile(`\svalue="([^"]*)"`)
)

// formOf is the approval form of a review page as a browser posts it:
// every input with its value.
func formOf(page string) url.Values {
	form := url.Values{}
	_, approve, _ := strings.Cut(page, `id="approve-form"`)
	approve, _, _ = strings.Cut(approve, "</form>")
	for _, tag := range inputTag.FindAllString(approve, -1) {
		name, value := inputName.FindStringSubmatch(tag), inputValue.FindStringSubmatch(tag)
		if name != nil && value != nil { // checkboxes have no value: unticked
			form.Set(name[1], html.UnescapeString(value[1]))
		}
	}
	return form
}

func docState(t *testing.T, st *store.Store, id string) document.State {
	t.Helper()
	d, err := st.Document(t.Context(), id)
	require.NoError(t, err)
	return d.State
}

// The queue lists held documents oldest first, filtered by client and
// reason; the page shows what was read with the rejection at the field it
// concerns, the page image (served as PNG by the console) and the boxes of
// the values found on it.
func TestReviewQueueAndPage(t *testing.T) {
	t.Parallel()
	requirePoppler(t)
	b := setupReview(t, pdftext.RenderOptions{})
	first := b.heldGenOrder(t, "acme")
	second := b.hold(t, "globex", reviewPDF(), readOrder(), document.ReasonCannotParseItems, "arithmetic check failed: net_total")

	queue := readBody(t, opsRequest(t, "GET", b.url+"/ops/review", opsToken, nil))
	i, j := strings.Index(queue, `id="held-`+first.LogID+`"`), strings.Index(queue, `id="held-`+second.LogID+`"`)
	require.True(t, i >= 0 && j > i, "both held, the oldest first")
	only := readBody(t, opsRequest(t, "GET", b.url+"/ops/review?client=globex", opsToken, nil))
	require.NotContains(t, only, `id="held-`+first.LogID+`"`)
	require.Contains(t, only, `id="held-`+second.LogID+`"`)
	byReason := readBody(t, opsRequest(t, "GET", b.url+"/ops/review?reason=document_id_missing", opsToken, nil))
	require.Contains(t, byReason, `id="held-`+first.LogID+`"`)
	require.NotContains(t, byReason, `id="held-`+second.LogID+`"`)
	old := readBody(t, opsRequest(t, "GET", b.url+"/ops/review?age=4h", opsToken, nil))
	require.Contains(t, old, `id="queue-empty"`, "nothing waits longer than 4 hours")

	doc := readBody(t, opsRequest(t, "GET", b.url+"/ops/documents/"+first.LogID, opsToken, nil))
	require.Contains(t, doc, `href="/ops/review/`+first.LogID+`" id="review-link"`, "the document page leads to its review")
	res := opsRequest(t, "GET", b.url+"/ops/review/"+first.LogID, opsToken, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "script-src 'self'")
	page := readBody(t, res)
	require.Contains(t, page, `<script src="/ops/static/review.js" defer></script>`)
	require.NotRegexp(t, `<script>|<script [^s]|\son[a-z]+="`, page, "no inline script or handler: the CSP allows only review.js")
	require.Regexp(t, `id="f-order_id-problem">missing: no order number found`, page, "the rejection at its field")
	form := formOf(page)
	require.Equal(t, "Bolts M8", form.Get("i0.description"))
	require.Equal(t, "20.00", form.Get("totals.net_amount"))
	// "Bolts M8" is printed at x 150 pt on the A4 page: 25.2 % from the left.
	require.Regexp(t, `class="box" data-for="f-i0-description" data-box="25\.2\d*,`, page)
	require.Contains(t, page, `data-for="f-totals-net_amount"`)
	require.Contains(t, page, `data-for="f-i1-line_amount"`, "an item's amount is found on its row")

	img := opsRequest(t, "GET", b.url+"/ops/review/"+first.LogID+"/pages/1", opsToken, nil)
	require.Equal(t, http.StatusOK, img.StatusCode)
	require.Equal(t, "image/png", img.Header.Get("Content-Type"))
	cfg, err := png.DecodeConfig(strings.NewReader(readBody(t, img)))
	require.NoError(t, err)
	require.InDelta(t, 595.0/72*pdftext.DefaultRenderDPI, cfg.Width, 1)
	_, err = b.objs.Get(t.Context(), objectstore.ResultKey(first.LogID, first.CreatedAt, "review-page-1.png"))
	require.NoError(t, err, "the drawn page is kept in the object store")
	require.Equal(t, http.StatusNotFound, opsRequest(t, "GET", b.url+"/ops/review/"+first.LogID+"/pages/2", opsToken, nil).StatusCode)
}

// requirePoppler skips without poppler-utils (the pages are drawn with
// it), except under CI=true.
func requirePoppler(t *testing.T) {
	t.Helper()
	if _, err := pdftext.RenderLayout(t.Context(), reviewPDF(), pdftext.RenderOptions{}); err != nil {
		if errors.Is(err, pdftext.ErrUnavailable) && os.Getenv("CI") != "true" {
			t.Skipf("poppler-utils not installed (%v); skipping", err)
		}
		require.NoError(t, err)
	}
}

// Approval is refused while the corrected order does not close, unless the
// person ticks "confirm the difference" and writes a comment; a value that
// is not a number is refused at its field. A refusal keeps the person's
// values and changes nothing.
func TestReviewApprovalRefusedWhileNotClosing(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	d := b.heldGenOrder(t, "acme")
	approve := b.url + "/ops/review/" + d.LogID + "/approve"
	form := formOf(readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, opsToken, nil)))
	form.Set("order_id", "G-4711")
	form.Set("i0.quantity", "12") // 12 × 1.50 = 18.00, printed 15.00

	res := opsRequest(t, "POST", approve, opsToken, form)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	page := readBody(t, res)
	require.Contains(t, page, "Not approved: the order does not close")
	require.Contains(t, page, "line_amount: line 1")
	require.Regexp(t, `name="i0.quantity" value="12"`, page, "the person's values stay")
	require.Equal(t, document.StateProcessedRejected, docState(t, b.st, d.ID))

	form.Set("confirm", "on")
	require.Equal(t, http.StatusUnprocessableEntity, opsRequest(t, "POST", approve, opsToken, form).StatusCode, "confirmed without a comment")
	form.Del("confirm")
	form.Set("comment", "twelve agreed by phone")
	require.Equal(t, http.StatusUnprocessableEntity, opsRequest(t, "POST", approve, opsToken, form).StatusCode, "a comment without the confirmation")

	form.Set("i1.unit_price", "0,25")
	res = opsRequest(t, "POST", approve, opsToken, form)
	require.Equal(t, http.StatusUnprocessableEntity, res.StatusCode)
	require.Contains(t, readBody(t, res), "not a number: write it without grouping, with a dot")
	form.Set("i1.unit_price", "0.25")

	form.Set("confirm", "on")
	res = opsRequest(t, "POST", approve, opsToken, form)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ops/review/"+d.LogID+"?done=approved", res.Header.Get("Location"))
	require.Equal(t, document.StateProcessedSuccess, docState(t, b.st, d.ID))
	evs, err := b.st.Events(t.Context(), d.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, "operator:ops-console", last.Actor)
	require.Contains(t, last.Detail, `items[0].quantity: "10" → "12"`)
	require.Contains(t, last.Detail, "comment: twelve agreed by phone")

	done := readBody(t, opsRequest(t, "GET", b.url+res.Header.Get("Location"), opsToken, nil))
	require.Contains(t, done, "Approved: the corrected order is delivered as success.")
	require.Contains(t, done, `id="add-sample"`)
}

// Every form of the review pages needs the session's CSRF value in its
// body; without it (or with another) nothing happens.
func TestReviewFormsNeedCSRF(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	d := b.heldGenOrder(t, "acme")
	cookie := loginAs(t, b.url, opsToken)
	csrf := csrfOf(t, b.url, cookie)
	form := formOf(readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, "", nil, "Cookie", cookie)))
	require.Equal(t, csrf, form.Get("csrf"), "the page's form carries the session's value")
	form.Set("order_id", "G-4711")
	for _, action := range []string{"approve", "release", "sample"} {
		for _, value := range []string{"", "forged"} {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			f.Set("csrf", value)
			u := b.url + "/ops/review/" + d.LogID + "/" + action
			res := opsRequest(t, "POST", u, "", f, "Cookie", cookie)
			require.Equal(t, http.StatusForbidden, res.StatusCode, "%s with csrf %q", action, value)
			res = opsRequest(t, "POST", u+"?csrf="+csrf, "", url.Values{"order_id": {"G-4711"}}, "Cookie", cookie)
			require.Equal(t, http.StatusForbidden, res.StatusCode, "%s with the value in the query string", action)
		}
	}
	for _, action := range []string{"approve", "release", "sample"} {
		res := opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/"+action, "", form)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "%s without a session", action)
	}
	require.Equal(t, document.StateProcessedRejected, docState(t, b.st, d.ID), "no refused form acted")
	_, held, err := b.st.ReviewUntil(t.Context(), d.ID)
	require.NoError(t, err)
	require.True(t, held)

	res := opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/approve", "", form, "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "the page's own form acts")
}

// Two operators approve the same document at once: exactly one wins; the
// other gets 409 and a page saying someone else finished it first.
func TestReviewConcurrentApproval(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	addOperator(t, b.st, "alice", "dio_alice-review-token-0123")
	addOperator(t, b.st, "bob", "dio_bob-review-token-0123")
	d := b.heldGenOrder(t, "acme")
	form := formOf(readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, opsToken, nil)))
	form.Set("order_id", "G-4711")
	tokens := map[string]string{"alice": "dio_alice-review-token-0123", "bob": "dio_bob-review-token-0123"}
	type answer struct {
		status int
		body   string
	}
	answers := map[string]answer{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for name, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := opsRequest(t, "POST", b.url+"/ops/review/"+d.LogID+"/approve", tok, form)
			body := readBody(t, res)
			mu.Lock()
			answers[name] = answer{res.StatusCode, body}
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	var winner, loser string
	for name, a := range answers {
		switch a.status {
		case http.StatusSeeOther:
			require.Empty(t, winner, "two approvals won: %v", answers)
			winner = name
		case http.StatusConflict:
			loser = name
			require.Contains(t, a.body, "Your change was not applied: this document is no longer held for review")
		default:
			t.Fatalf("%s got %d: %s", name, a.status, a.body)
		}
	}
	require.NotEmpty(t, winner)
	require.NotEmpty(t, loser)
	require.Contains(t, answers[loser].body, "operator:"+winner, "the loser is told who approved")
	require.Equal(t, "operator:"+winner, lastActor(t, b.st, d.ID))
	var deliveries int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM outbox WHERE subject = $1`,
		jobs.DeliverSubject(b.qcfg.SubjectPrefix, "acme")).Scan(&deliveries))
	require.Equal(t, 1, deliveries, "one success delivery queued")
}

// An operator limited to acme sees only acme's held documents; globex's
// review page, page images and actions answer 404 and change nothing.
func TestReviewOperatorSeesOwnClients(t *testing.T) {
	t.Parallel()
	b := setupReview(t, pdftext.RenderOptions{})
	const token = "dio_carol-review-token-0123"
	addOperator(t, b.st, "carol", token, "acme")
	mine, theirs := b.heldGenOrder(t, "acme"), b.heldGenOrder(t, "globex")
	queue := readBody(t, opsRequest(t, "GET", b.url+"/ops/review", token, nil))
	require.Contains(t, queue, `id="held-`+mine.LogID+`"`)
	require.NotContains(t, queue, theirs.LogID)
	require.NotContains(t, queue, "globex", "not even as a filter choice")
	for _, p := range []string{"", "/pages/1"} {
		require.Equal(t, http.StatusNotFound, opsRequest(t, "GET", b.url+"/ops/review/"+theirs.LogID+p, token, nil).StatusCode, p)
	}
	for _, action := range []string{"approve", "release", "sample"} {
		res := opsRequest(t, "POST", b.url+"/ops/review/"+theirs.LogID+"/"+action, token, url.Values{"order_id": {"X"}})
		require.Equal(t, http.StatusNotFound, res.StatusCode, action)
	}
	require.Equal(t, document.StateProcessedRejected, docState(t, b.st, theirs.ID))
	res := opsRequest(t, "POST", b.url+"/ops/review/"+mine.LogID+"/release", token, url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "operator:carol", lastActor(t, b.st, mine.ID))
}

// A hostile PDF held for review: of 2,000 pages the first few are drawn
// and the page says so; a 30,000 × 30,000 pt page is drawn at a resolution
// within the pixel limit, and the page says that too.
func TestReviewPageRenderingLimits(t *testing.T) {
	t.Parallel()
	requirePoppler(t)
	b := setupReview(t, pdftext.RenderOptions{MaxPages: 3, MaxPixels: 1_000_000})
	pages := make([]pdftexttest.Page, 2000)
	for i := range pages {
		pages[i] = pdftexttest.LinesPage([]string{"GENERATED ORDER", "Order no. G-4711"})
	}
	pages[0] = pdftexttest.Page{Width: 30000, Height: 30000, Texts: []pdftexttest.Text{{X: 72, Y: 600, Size: 400, S: "GENERATED ORDER"}}}
	d := b.hold(t, "acme", pdftexttest.Build(pages...), readOrder(), document.ReasonDocumentIDMissing, "no order number")

	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID, opsToken, nil))
	require.Contains(t, page, "The document has 2000 pages; the first 3 are shown (the limit is 3).")
	require.Regexp(t, `Page 1 is 10583 × 10583 mm: drawn at 2\.4 dpi to stay within 1000000 pixels\.`, page)
	require.Equal(t, 3, strings.Count(page, `<figure class="page"`))
	img := opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID+"/pages/1", opsToken, nil)
	require.Equal(t, http.StatusOK, img.StatusCode)
	cfg, err := png.DecodeConfig(strings.NewReader(readBody(t, img)))
	require.NoError(t, err)
	require.LessOrEqual(t, cfg.Width*cfg.Height, 1_000_000)
	require.Equal(t, http.StatusNotFound, opsRequest(t, "GET", b.url+"/ops/review/"+d.LogID+"/pages/4", opsToken, nil).StatusCode,
		"a page beyond the limit is not drawn")
}

// The page re-runs the template's checks as the person types with the
// processor's rules: a price per 1000, a discount percent and document
// charges (kept from the reading, not shown) close as read, and after an
// edit the page names the same failed checks as template.CheckOrder.
func TestReviewArithmeticInChromium(t *testing.T) {
	t.Parallel()
	bin := repotest.Chromium(t)
	b := setupReview(t, pdftext.RenderOptions{})
	// 10 × 4250.00 ÷ 1000 = 42.50; 3 × 10.00 × (1 − 25 %) = 22.50;
	// 42.50 + 22.50 + charges 10.00 = 75.00; 75.00 + 14.25 = 89.25.
	read := order.Order{Type: order.TypeOrder, ID: "PB-1", Currency: "EUR", Items: []order.Item{
		{SupplierArticleID: "SCREW-1", Description: "Screws", Quantity: "10", UnitPrice: "4250.00", PriceBasisQuantity: "1000", LineAmount: "42.50"},
		{SupplierArticleID: "LAMP-2", Description: "Lamps", Quantity: "3", UnitPrice: "10.00", DiscountPercent: "25", LineAmount: "22.50"},
	}, Totals: order.Totals{NetAmount: "75.00", Charges: "10.00", TaxAmount: "14.25", GrossAmount: "89.25"}}
	d := b.hold(t, "acme", reviewPDF(), read, document.ReasonVATIDMissing, "no VAT id")
	fails, _ := b.tpl.CheckOrder(&read)
	require.Empty(t, fails, "the order as read closes")

	ctx := chromeTab(t, bin)
	var closes bool
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(b.url+"/ops/login"),
		chromedp.SendKeys(`#token`, opsToken, chromedp.ByQuery),
		chromedp.Click(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(`#states`, chromedp.ByQuery),
		chromedp.Navigate(b.url+"/ops/review/"+d.LogID),
		chromedp.WaitVisible(`#approve-form`, chromedp.ByQuery),
		chromedp.Evaluate(`!!document.querySelector('#closes')`, &closes),
	))
	require.True(t, closes, "the page agrees: the order closes")

	edited := read
	edited.Items = append([]order.Item(nil), read.Items...)
	edited.Items[1].LineAmount, edited.Totals.TaxAmount = "30.00", "14.00"
	fails, _ = b.tpl.CheckOrder(&edited)
	var want []string
	for _, f := range fails {
		want = append(want, f.Check)
	}
	require.Equal(t, []string{"line_amount", "net_total", "gross_total"}, want)
	var got []string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Clear(`#f-i1-line_amount`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-i1-line_amount`, "30.00", chromedp.ByQuery),
		chromedp.Clear(`#f-totals-tax_amount`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-totals-tax_amount`, "14.00", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('#checks li')).map((li) => li.textContent.split(':')[0])`, &got),
	))
	require.Equal(t, want, got, "the page fails the checks template.CheckOrder fails")
}

// chromeTab is a headless Chromium tab for the test, closed after it.
func chromeTab(t *testing.T, bin string) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true))
	tab, cancelTab := chromedp.NewContext(alloc)
	ctx, cancel := context.WithTimeout(tab, 45*time.Second)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return ctx
}
