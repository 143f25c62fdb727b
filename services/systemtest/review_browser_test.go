package systemtest_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/docintake/docintake/pkg/client"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/services/intakectl"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"github.com/stretchr/testify/require"
)

// Issue 27's loop in a real browser on a real rejected PO: a Contoso
// purchase order of the corpus read by a contoso-po template that misses
// the order number and date and misreads a quantity (its "35" as 5, so the
// line amount check fails), for a client that holds such rejections for
// review. The clerk finds it in the queue, sees the page drawn with the
// values' boxes, corrects the two header values and the item (the page
// refuses to approve while the order does not close), approves with the
// keyboard, and the client's webhook gets success with the corrected,
// XSD-valid openTRANS; the history names every change and the clerk. Added
// as a sample, the PO then holds the template's next version to the fix:
// `intakectl templates test` fails the broken template and passes the
// fixed one. With INTAKE_SCREENSHOT_DIR set, the review page is saved there
// as review.png (the README's screenshot).

const (
	reviewClerkToken = "dio_clerk-review-token-0123456789"
	reviewHookToken  = "desk-webhook-token"
	reviewClientTok  = "desk-token"
)

// brokenContoso is deploy/templates/contoso-po.yml with the order number
// and date labels a PO does not print, and a quantity pattern that keeps
// only the last digit. fixed is the template as deployed.
func brokenContoso(t *testing.T) (broken, fixed []byte) {
	t.Helper()
	fixed, err := os.ReadFile(filepath.Join(repotest.Root(t), "deploy", "templates", "contoso-po.yml"))
	require.NoError(t, err)
	s := string(fixed)
	for _, r := range [][2]string{
		{`regex: 'PO #\s+(\d+)'`, `regex: 'P\.O\. Number\s+(\d+)'`},
		{`regex: DATE\s+(\d{1,2}/\d{1,2}/\d{4})`, `regex: ORDER DATE\s+(\d{1,2}/\d{1,2}/\d{4})`},
		{`\s{2,}(?P<quantity>\d+)\s+`, `\s{2,}\d*?(?P<quantity>\d)\s+`},
	} {
		require.Equal(t, 1, strings.Count(s, r[0]), "contoso-po.yml no longer has %s", r[0])
		s = strings.Replace(s, r[0], r[1], 1)
	}
	return []byte(s), fixed
}

// reviewSystem runs docintake with the broken template and client desk
// (review: hold, webhook to hookURL) and a named operator clerk.
func reviewSystem(t *testing.T, hookURL string, broken []byte) *standalonetest.System {
	t.Helper()
	sys, _ := learnSystem(t, hookURL, map[string][]byte{"contoso-po.yml": broken}) // review_learn_browser_test.go
	return sys
}

// webhookInbox receives the client's verified deliveries.
func webhookInbox(t *testing.T) (string, <-chan client.Delivery) {
	t.Helper()
	got := make(chan client.Delivery, 16)
	h, err := client.NewWebhookHandler(client.WebhookConfig{Token: reviewHookToken,
		Handle: func(_ context.Context, d client.Delivery) error { got <- d; return nil }})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/hook", got
}

func TestReviewLoopInChromium(t *testing.T) {
	t.Parallel()
	bin := repotest.Chromium(t)
	pdf, err := os.ReadFile(repotest.Shared(t, "corpus", "orders", "contoso-po-Adatum-Grady.pdf"))
	require.NoError(t, err)
	broken, fixed := brokenContoso(t)
	hookURL, deliveries := webhookInbox(t)
	sys := reviewSystem(t, hookURL, broken)

	c, err := client.New(sys.URL, reviewClientTok, nil)
	require.NoError(t, err)
	ack, err := c.Upload(t.Context(), client.UploadRequest{MessageID: "po-190324", Subject: "PO 190324",
		Template: "contoso-po", Filename: "contoso-po-Adatum-Grady.pdf", File: bytes.NewReader(pdf)})
	require.NoError(t, err)
	logID := ack.LogID
	waitFor(t, "the PO held for review", func() bool {
		d, err := c.Document(t.Context(), logID)
		return err == nil && d.State == "processed_rejected"
	})

	ctx := browser(t, bin)
	reviewInBrowser(t, ctx, sys.URL, logID)
	checkDelivered(t, deliveries, logID)
	checkHistoryAndSample(t, ctx, sys, logID, fixed)
}

// browser is a headless Chromium tab on a laptop-sized window.
func browser(t *testing.T, bin string) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.WindowSize(1440, 900), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("no-default-browser-check", true))
	tab, cancelTab := chromedp.NewContext(alloc)
	ctx, cancel := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return ctx
}

// reviewInBrowser logs the clerk in, opens the PO from the queue, checks
// the page image and a box, then corrects and approves the order.
func reviewInBrowser(t *testing.T, ctx context.Context, base, logID string) {
	t.Helper()
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(base+"/ops/login"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.SendKeys(`#token`, reviewClerkToken, chromedp.ByQuery),
		chromedp.Click(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(`#states`, chromedp.ByQuery), // the overview: logged in
		// Navigations rather than clicks: the queue reloads itself now and
		// then, which would race a click.
		chromedp.Navigate(base+"/ops/review"),
		chromedp.WaitVisible(`[id="held-`+logID+`"] a[href="/ops/review/`+logID+`"]`, chromedp.ByQuery),
		chromedp.Navigate(base+"/ops/review/"+logID),
		chromedp.WaitVisible(`#approve-form`, chromedp.ByQuery),
	), "log in and open the PO from the queue")
	var reason string
	var loaded, highlighted bool
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Text(`#reason`, &reason, chromedp.ByQuery),
		chromedp.Poll(`(() => { const i = document.querySelector('#page-img-1'); return i && i.complete && i.naturalWidth > 0; })()`,
			&loaded, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Click(`#f-i0-description`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const b = document.querySelector('.box.hl'); return !!b && b.dataset.for === 'f-i0-description' && b.offsetWidth > 0; })()`, &highlighted),
	), "the page image and the item's box")
	require.Equal(t, "document_id_missing", reason)
	require.True(t, loaded, "page 1 drawn (naturalWidth > 0)")
	require.True(t, highlighted, "clicking the description highlights where it was read")
	correctAndApprove(t, ctx, logID)
}

// correctAndApprove types the order number, date and the first item's
// quantity as the PO prints them and approves with the keyboard.
func correctAndApprove(t *testing.T, ctx context.Context, logID string) {
	t.Helper()
	var blocked bool
	var url string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#f-order_id`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-order_id`, "190324", chromedp.ByQuery),
		chromedp.SendKeys(`#f-order_date`, "2019-08-29", chromedp.ByQuery),
		// The order still does not close (5 × 89.00 is not 3,115.00): the
		// page refuses Ctrl+Enter and says why.
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.Evaluate(`!!document.querySelector('#does-not-close')`, &blocked),
		chromedp.Location(&url),
	), "correct the header, approval refused")
	require.True(t, blocked, "the page says the order does not close")
	require.True(t, strings.HasSuffix(url, "/ops/review/"+logID), url)

	var closes bool
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Clear(`#f-i0-quantity`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-i0-quantity`, "35", chromedp.ByQuery),
		chromedp.Evaluate(`!!document.querySelector('#closes')`, &closes),
	), "correct the item")
	require.True(t, closes, "35 × 89.00 = 3,115.00: the order closes")
	screenshot(t, ctx)

	var accepted, focused string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.KeyEvent(kb.Enter),
		chromedp.Evaluate(`document.querySelector('#item-0').className`, &accepted),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
	), "Enter accepts the row")
	require.Contains(t, accepted, "accepted", "Enter marks the row accepted")
	require.Equal(t, "f-i1-position", focused, "and goes to the next row, without sending the form")

	var ended string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.WaitVisible(`#review-ended`, chromedp.ByQuery),
		chromedp.Text(`#review-ended`, &ended, chromedp.ByQuery),
	), "approve with Ctrl+Enter")
	require.Contains(t, ended, "approved in review by operator:clerk")
}

// screenshot saves the review page, the line amount's box highlighted, as
// review.png in INTAKE_SCREENSHOT_DIR when it is set.
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	dir := os.Getenv("INTAKE_SCREENSHOT_DIR")
	if dir == "" {
		return
	}
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.Focus(`#f-i0-line_amount`, chromedp.ByQuery),
		chromedp.CaptureScreenshot(&png)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "review.png"), png, 0o644))
}

// checkDelivered waits for the PO's success and checks its openTRANS:
// valid against the schema, with the three corrections.
func checkDelivered(t *testing.T, deliveries <-chan client.Delivery, logID string) {
	t.Helper()
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
			// The values printed on the PO.
			require.Equal(t, "190324", o.ID)
			require.Equal(t, "2019-08-29", o.IssueDate.String())
			require.Len(t, o.Items, 2)
			require.Equal(t, "35", o.Items[0].Quantity)
			require.Equal(t, "MM5-1121", o.Items[0].SupplierArticleID)
			require.Equal(t, "3115.00", o.Items[0].LineAmount)
			return
		case <-deadline:
			t.Fatal("no success webhook within 60 s")
		}
	}
}

// checkHistoryAndSample checks the history's record of the approval, adds
// the PO as a sample and runs the template's samples with intakectl.
func checkHistoryAndSample(t *testing.T, ctx context.Context, sys *standalonetest.System, logID string, fixed []byte) {
	t.Helper()
	var events, sampled string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(sys.URL+"/ops/documents/"+logID),
		chromedp.Text(`#events`, &events, chromedp.ByQuery),
		chromedp.Navigate(sys.URL+"/ops/review/"+logID),
		chromedp.Click(`#add-sample`, chromedp.ByQuery),
		chromedp.WaitVisible(`#sampled`, chromedp.ByQuery),
		chromedp.Text(`#sampled`, &sampled, chromedp.ByQuery),
	), "the history, then add as a sample")
	for _, want := range []string{`order_id: "" → "190324"`, `order_date: "" → "2019-08-29"`, `items[0].quantity: "5" → "35"`,
		"operator:clerk"} {
		require.Contains(t, events, want)
	}
	require.Contains(t, sampled, "added as sample review-"+logID+".pdf of template contoso-po v2")

	env := map[string]string{"INTAKE_DATABASE_URL": sys.DatabaseURL, "INTAKE_PDF_ENGINE": "pdftotext"}
	dir := t.TempDir()
	run := func(args ...string) (int, string) {
		var out, errs bytes.Buffer
		code := intakectl.Main(t.Context(), args, intakectlEnv(env, &out, &errs))
		return code, out.String() + errs.String()
	}
	code, out := run("templates", "pull", dir)
	require.Equal(t, 0, code, out)
	file := filepath.Join(dir, "contoso-po.yml")
	_, err := os.Stat(filepath.Join(dir, "contoso-po.samples", "review-"+logID+".pdf"))
	require.NoError(t, err, "the template's samples include the PO")
	code, out = run("templates", "test", file)
	require.Equal(t, 1, code, "the sample catches the broken template: %s", out)
	require.NoError(t, os.WriteFile(file, fixed, 0o644))
	code, out = run("templates", "test", file)
	require.Equal(t, 0, code, "the fixed template reads the PO as the clerk corrected it: %s", out)
}
