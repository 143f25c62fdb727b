package systemtest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/docintake/docintake/pkg/client"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/intakectl"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// Learning from a review on the console's page (issue 27), in a real
// browser against the whole system: "draft a template" from a held PO's
// corrected values pushed as the template's next version, and an unknown
// article and unit mapped at the rows that print them, after which the
// deferred PO is delivered.

// learnSystem runs docintake with the templates files (name → content) and
// client desk (review: hold, webhook to hookURL), and a named operator
// clerk; it returns the system and its store.
func learnSystem(t *testing.T, hookURL string, files map[string][]byte) (*standalonetest.System, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), content, 0o644))
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	sum := store.TokenHash(reviewClientTok)
	require.NoError(t, os.WriteFile(clients, fmt.Appendf(nil, `clients:
  - id: desk
    name: order desk
    token_sha256: ["%x"]
    webhook_url: %s
    webhook_token: %s
    review: hold
    review_timeout: 1h
`, sum[:], hookURL, reviewHookToken), 0o644))
	sys := standalonetest.Start(t, map[string]string{"INTAKE_CLIENTS_FILE": clients, "INTAKE_TEMPLATES_DIR": dir,
		"INTAKE_PDF_ENGINE": "pdftotext", "INTAKE_OPS_CONSOLE": "true"})
	pool, err := pgxpool.New(t.Context(), sys.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	h := store.TokenHash(reviewClerkToken)
	require.NoError(t, st.AddOperator(t.Context(), store.Operator{Name: "clerk"}, &h))
	return sys, st
}

// tableRow returns a writer of a table's rows: the cells of a row at
// baseline y, each at its column's x.
func tableRow(xs ...float64) func(y float64, cells ...string) []pdftexttest.Text {
	return func(y float64, cells ...string) []pdftexttest.Text {
		out := make([]pdftexttest.Text, len(cells))
		for i, c := range cells {
			out[i] = pdftexttest.Text{X: xs[i], Y: y, S: c}
		}
		return out
	}
}

// deskPO prints purchase order PO-7001 of Desk Buyer Ltd: bolts 10 × 1.50
// = 15.00 and nuts 20 × 0.25 = 5.00, net total 20.00 EUR.
func deskPO() []byte {
	row := tableRow(72, 110, 190, 330, 400, 480)
	texts := []pdftexttest.Text{{X: 72, Y: 60, Size: 14, S: "Desk Buyer Ltd"}, {X: 72, Y: 90, Bold: true, S: "PURCHASE ORDER"},
		{X: 72, Y: 120, S: "Order No: PO-7001"}, {X: 72, Y: 134, S: "Order Date: 2026-03-02"}, {X: 72, Y: 148, S: "Currency: EUR"}}
	texts = append(texts, row(180, "Pos", "Article", "Description", "Qty", "Unit Price", "Amount")...)
	texts = append(texts, row(196, "10", "BOLT-1", "Bolts M8", "10", "1.50", "15.00")...)
	texts = append(texts, row(210, "20", "NUT-2", "Nuts M8", "20", "0.25", "5.00")...)
	texts = append(texts, pdftexttest.Text{X: 400, Y: 240, S: "Net total"}, pdftexttest.Text{X: 480, Y: 240, S: "20.00"})
	return pdftexttest.Build(pdftexttest.Page{Texts: texts})
}

// deskTemplate reads deskPO but for its order number (it looks for an
// "Order Number:" label the PO does not print): the PO is held for review
// document_id_missing.
const deskTemplate = `issuer: Desk Buyer
keywords: [Desk Buyer Ltd, PURCHASE ORDER]
fields:
  order_id: {parser: regex, regex: 'Order Number:\s+(\S+)'}
  date: {parser: regex, regex: 'Order Date:\s+(\d{4}-\d{2}-\d{2})', type: date}
  currency: {parser: regex, regex: 'Currency:\s+([A-Z]{3})'}
  buyer_name: {parser: static, value: Desk Buyer Ltd}
  total_net: {parser: regex, regex: 'Net total\s+(\d+\.\d\d)'}
  lines:
    parser: lines
    start: 'Pos\s+Article'
    end: 'Net total'
    line: '^\s*(?P<position>\d+)\s+(?P<supplier_article_id>[A-Z]+-\d+)\s+(?P<description>.+?)\s+(?P<quantity>\d+)\s+(?P<unit_price>\d+\.\d\d)\s+(?P<line_amount>\d+\.\d\d)\s*$'
docintake:
  name: desk-po
`

// uploadAndWait uploads pdf as client desk's and waits until it is in state.
func uploadAndWait(t *testing.T, sys *standalonetest.System, pdf []byte, template, state string) string {
	t.Helper()
	c, err := client.New(sys.URL, reviewClientTok, nil)
	require.NoError(t, err)
	ack, err := c.Upload(t.Context(), client.UploadRequest{MessageID: "po-" + template, Subject: "PO",
		Template: template, Filename: template + ".pdf", File: bytes.NewReader(pdf)})
	require.NoError(t, err)
	waitFor(t, "the PO "+state, func() bool {
		d, err := c.Document(t.Context(), ack.LogID)
		return err == nil && string(d.State) == state
	})
	return ack.LogID
}

// loginClerk logs the clerk in with its own token on the login form.
func loginClerk(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(base+"/ops/login"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.SendKeys(`#token`, reviewClerkToken, chromedp.ByQuery),
		chromedp.Click(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(`#states`, chromedp.ByQuery),
	), "log the clerk in")
}

// A PO held because its template misses the order number: the clerk types
// the number printed on it and drafts a template from the corrected values
// (Alt+D). The draft reads the PDF back as confirmed, and pushed from the
// page it becomes desk-po v2, by the clerk, with the PO as its sample,
// which `intakectl templates test` passes.
func TestReviewDraftPushInChromium(t *testing.T) {
	t.Parallel()
	bin := repotest.Chromium(t)
	hookURL, _ := webhookInbox(t)
	sys, st := learnSystem(t, hookURL, map[string][]byte{"desk-po.yml": []byte(deskTemplate)})
	logID := uploadAndWait(t, sys, deskPO(), "desk-po", "processed_rejected")

	ctx := browser(t, bin)
	loginClerk(t, ctx, sys.URL)
	var passes bool
	var results, orderID, pushLabel string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(sys.URL+"/ops/review/"+logID),
		chromedp.WaitVisible(`#approve-form`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-order_id`, "PO-7001", chromedp.ByQuery),
		chromedp.KeyEvent("d", chromedp.KeyModifiers(input.ModifierAlt)), // Alt+D
		chromedp.WaitVisible(`#draft-results`, chromedp.ByQuery),
		chromedp.Text(`#draft-results`, &results, chromedp.ByQuery),
		chromedp.Evaluate(`!!document.querySelector('#draft-passes')`, &passes),
		chromedp.Text(`#draft-field-order_id`, &orderID, chromedp.ByQuery),
		chromedp.Text(`#push-form button[name=scope]`, &pushLabel, chromedp.ByQuery),
	), "draft from the corrected values")
	shot(t, ctx, "review-draft.png")
	require.True(t, passes, "the draft reads the PO back: %s", results)
	require.Contains(t, results, "pass review-"+logID+".pdf")
	require.Contains(t, orderID, "found", "the order number is where the PO prints it")
	require.Equal(t, "push as desk-po v2 (global)", pushLabel)

	var done string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.KeyEvent("p", chromedp.KeyModifiers(input.ModifierAlt)), // Alt+P
		chromedp.WaitVisible(`#done`, chromedp.ByQuery),
		chromedp.Text(`#done`, &done, chromedp.ByQuery),
	), "push the draft")
	require.Contains(t, done, "Pushed the drafted template")

	v2, err := st.TemplateVersion(t.Context(), "", "desk-po", 2)
	require.NoError(t, err)
	require.Equal(t, "operator:clerk", v2.PushedBy)
	require.False(t, v2.Forced)
	names := make([]string, len(v2.Samples))
	for i, s := range v2.Samples {
		names[i] = s.Name
	}
	require.ElementsMatch(t, []string{"review-" + logID + ".pdf", "review-" + logID + ".json"}, names)
	require.Contains(t, lastEvent(t, st, logID).Detail, "drafted template pushed as desk-po v2 (global): 1 samples pass")
	require.Equal(t, "operator:clerk", lastEvent(t, st, logID).Actor)

	env := map[string]string{"INTAKE_DATABASE_URL": sys.DatabaseURL, "INTAKE_PDF_ENGINE": "pdftotext"}
	dir := t.TempDir()
	var out bytes.Buffer
	require.Equal(t, 0, runIntakectl(t, env, &out, "templates", "pull", dir), out.String())
	require.Equal(t, 0, runIntakectl(t, env, &out, "templates", "test", filepath.Join(dir, "desk-po.yml")),
		"v2 passes its samples: %s", out.String())
	require.Contains(t, out.String(), "pass review-"+logID+".pdf")
}

func runIntakectl(t *testing.T, env map[string]string, out *bytes.Buffer, args ...string) int {
	t.Helper()
	out.Reset()
	return intakectl.Main(t.Context(), args, intakectlEnv(env, out, out))
}

func lastEvent(t *testing.T, st *store.Store, logID string) document.Event {
	t.Helper()
	d, err := st.DocumentByLogIDAnyClient(t.Context(), logID)
	require.NoError(t, err)
	evs, err := st.Events(t.Context(), d.ID)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	return evs[len(evs)-1]
}

// mapPO prints purchase order PO-8001 of Map Buyer Inc with the buyer's
// article numbers: B-100 (10 pcs of bolts at 1.50 = 15.00) and B-200 (2
// "Bund" of rope at 4.00 = 8.00), net total 23.00.
func mapPO() []byte {
	row := tableRow(72, 110, 190, 320, 370, 430, 500)
	texts := []pdftexttest.Text{{X: 72, Y: 60, Size: 14, S: "Map Buyer Inc"}, {X: 72, Y: 90, Bold: true, S: "PURCHASE ORDER"},
		{X: 72, Y: 120, S: "Order No: PO-8001"}, {X: 72, Y: 134, S: "Order Date: 2026-03-02"}}
	texts = append(texts, row(170, "Pos", "Your Art.", "Description", "Qty", "Unit", "Price", "Amount")...)
	texts = append(texts, row(186, "10", "B-100", "Bolts M8", "10", "pcs", "1.50", "15.00")...)
	texts = append(texts, row(200, "20", "B-200", "Rope", "2", "Bund", "4.00", "8.00")...)
	texts = append(texts, pdftexttest.Text{X: 430, Y: 230, S: "Net total"}, pdftexttest.Text{X: 500, Y: 230, S: "23.00"})
	return pdftexttest.Build(pdftexttest.Page{Texts: texts})
}

// mapTemplate reads mapPO and maps the buyer's article numbers to the
// supplier's (table article).
const mapTemplate = `issuer: Map Buyer
keywords: [Map Buyer Inc, PURCHASE ORDER]
fields:
  order_id: {parser: regex, regex: 'Order No:\s+(\S+)'}
  date: {parser: regex, regex: 'Order Date:\s+(\d{4}-\d{2}-\d{2})', type: date}
  currency: {parser: static, value: EUR}
  total_net: {parser: regex, regex: 'Net total\s+(\d+\.\d\d)'}
  lines:
    parser: lines
    start: 'Pos\s+Your Art'
    end: 'Net total'
    line: '^\s*(?P<position>\d+)\s+(?P<buyer_article_id>\S+)\s+(?P<description>.+?)\s+(?P<quantity>\d+)\s+(?P<unit>\S+)\s+(?P<unit_price>\d+\.\d\d)\s+(?P<line_amount>\d+\.\d\d)\s*$'
docintake:
  name: map-po
  mappings:
    - {field: buyer_article_id, table: article, to: supplier_article_id}
`

// A PO deferred for an unknown article (B-100; B-200 is mapped) and an
// unknown unit ("Bund"): its review page shows both at the lines that
// print them; the clerk maps the article (Enter in its field), the PO is
// processed again at once and waits for the unit alone; the clerk gives
// the unit (a bundle, BE) and the PO is delivered as success with both.
// The history names the entries and the clerk.
func TestReviewMapUnknownArticleInChromium(t *testing.T) {
	t.Parallel()
	bin := repotest.Chromium(t)
	hookURL, deliveries := webhookInbox(t)
	sys, st := learnSystem(t, hookURL, map[string][]byte{"map-po.yml": []byte(mapTemplate)})
	require.NoError(t, st.PutMappings(t.Context(), "desk", []store.Mapping{{Kind: "article", Key: "B-200", Value: "S-200"}}))
	logID := uploadAndWait(t, sys, mapPO(), "map-po", "deferred_for_retry")

	ctx := browser(t, bin)
	loginClerk(t, ctx, sys.URL)
	var waiting, article, unit string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(sys.URL+"/ops/documents/"+logID),
		chromedp.Click(`#review-link`, chromedp.ByQuery), // "map what it waits for"
		chromedp.WaitVisible(`#map-form`, chromedp.ByQuery),
		chromedp.Text(`#map-form h2`, &waiting, chromedp.ByQuery),
		chromedp.Text(`#map-0`, &article, chromedp.ByQuery),
		chromedp.Text(`#map-1`, &unit, chromedp.ByQuery),
	), "the deferred PO's page")
	shot(t, ctx, "review-map.png")
	require.Contains(t, waiting, "Waiting for 2 mappings")
	require.Contains(t, article, "unknown article B-100 (buyer article, line 1)")
	require.Contains(t, article, "line 1: 10 B-100 Bolts M8 10 pcs", "at the row that prints it")
	require.Contains(t, unit, "unknown unit Bund (line 2)")

	require.NoError(t, chromedp.Run(ctx,
		chromedp.SendKeys(`#map-0-value`, "S-100"+kb.Enter, chromedp.ByQuery),
		chromedp.WaitVisible(`#done`, chromedp.ByQuery),
	), "map the article")
	ev := eventWith(t, st, logID, `mapping article "B-100" → "S-100" added for client desk`)
	require.Equal(t, "operator:clerk", ev.Actor)
	// Processed again at once: now it waits for the unit alone.
	waitFor(t, "the PO deferred for its unit", func() bool {
		e := lastEvent(t, st, logID)
		return e.To == document.StateDeferredForRetry && strings.Contains(e.Detail, `no unit mapping for "Bund"`)
	})

	var only string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(sys.URL+"/ops/review/"+logID),
		chromedp.WaitVisible(`#map-form`, chromedp.ByQuery),
		chromedp.Text(`#map-form`, &only, chromedp.ByQuery),
		chromedp.SendKeys(`#map-0-value`, "BE"+kb.Enter, chromedp.ByQuery),
		chromedp.WaitVisible(`#done`, chromedp.ByQuery),
	), "give the unit")
	require.Contains(t, only, "unknown unit Bund")
	require.NotContains(t, only, "B-100")
	require.Equal(t, "operator:clerk", eventWith(t, st, logID, `unit "Bund" → 1 × BE added to the unit table of client desk`).Actor)

	deadline := time.After(60 * time.Second)
	for {
		select {
		case d := <-deliveries:
			if d.LogID != logID || d.Status != client.StatusSuccess {
				continue
			}
			opentranstest.Validate(t, d.Result)
			o, err := opentrans.Read(bytes.NewReader(d.Result))
			require.NoError(t, err)
			require.Len(t, o.Items, 2)
			require.Equal(t, []string{"S-100", "B-100", "C62"}, []string{o.Items[0].SupplierArticleID, o.Items[0].BuyerArticleID, o.Items[0].Unit})
			require.Equal(t, []string{"S-200", "BE", "2"}, []string{o.Items[1].SupplierArticleID, o.Items[1].Unit, o.Items[1].Quantity})
			return
		case <-deadline:
			t.Fatal("no success webhook within 60 s")
		}
	}
}

// shot saves the page as name in INTAKE_SCREENSHOT_DIR when it is set.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("INTAKE_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
}

// eventWith is the document's event whose detail contains s.
func eventWith(t *testing.T, st *store.Store, logID, s string) document.Event {
	t.Helper()
	d, err := st.DocumentByLogIDAnyClient(t.Context(), logID)
	require.NoError(t, err)
	evs, err := st.Events(t.Context(), d.ID)
	require.NoError(t, err)
	for _, e := range evs {
		if strings.Contains(e.Detail, s) {
			return e
		}
	}
	t.Fatalf("no event of %s says %s", logID, s)
	return document.Event{}
}
