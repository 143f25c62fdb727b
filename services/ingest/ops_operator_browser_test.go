package ingest_test

import (
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/stretchr/testify/require"
)

// A named operator logs in on the console's login form with a token of its
// own: the header names it and the clients it is limited to, the review
// queue shows only those clients' documents, what it approves is recorded
// under its name, and logging out ends the session.
func TestOpsOperatorLoginInChromium(t *testing.T) {
	t.Parallel()
	bin := repotest.Chromium(t)
	b := setupReview(t, pdftext.RenderOptions{})
	const token = "dio_fay-review-token-0123456789"
	addOperator(t, b.st, "fay", token, "acme")
	mine, theirs := b.heldGenOrder(t, "acme"), b.heldGenOrder(t, "globex")

	ctx := chromeTab(t, bin)
	var who, queue string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(b.url+"/ops/review"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery), // not logged in: the login form
		chromedp.SendKeys(`#token`, token, chromedp.ByQuery),
		chromedp.Click(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(`#operator`, chromedp.ByQuery),
		chromedp.Text(`#operator`, &who, chromedp.ByQuery),
		chromedp.Navigate(b.url+"/ops/review"),
		chromedp.WaitVisible(`[id="held-`+mine.LogID+`"]`, chromedp.ByQuery),
		chromedp.Text(`main`, &queue, chromedp.ByQuery),
	), "log in with the operator's own token")
	require.Equal(t, "fay (clients acme)", who)
	require.NotContains(t, queue, theirs.LogID, "globex's document is not fay's to see")

	var ended string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(b.url+"/ops/review/"+mine.LogID),
		chromedp.WaitVisible(`#approve-form`, chromedp.ByQuery),
		chromedp.SendKeys(`#f-order_id`, "G-4711", chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.WaitVisible(`#review-ended`, chromedp.ByQuery),
		chromedp.Text(`#review-ended`, &ended, chromedp.ByQuery),
		chromedp.Click(`header form[action="/ops/logout"] button`, chromedp.ByQuery), // log out
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.Navigate(b.url+"/ops/review"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery), // the session is over
	), "approve as fay, then log out")
	require.Contains(t, ended, "approved in review by operator:fay")
	require.Equal(t, "operator:fay", lastActor(t, b.st, mine.ID))
}
