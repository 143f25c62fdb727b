package ingest_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/ingest"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

const opsToken = "ops-secret-token"

type opsBundle struct {
	url  string
	st   *store.Store
	js   jetstream.JetStream
	qcfg queue.Config
}

// setupOps serves the API with the console on an httptest server; the
// auto-refresh is long so a reload never races the browser test's clicks.
func setupOps(t *testing.T, token string) *opsBundle {
	t.Helper()
	return setupConsole(t, ingest.OpsConfig{Token: token}) // ops_operators_test.go
}

// dlqDocument stores an uploaded document and moves it to dlq the way the
// processor does after an unreadable PDF.
func dlqDocument(t *testing.T, st *store.Store, prefix, messageID string) document.Document {
	t.Helper()
	ctx := t.Context()
	logID := uuid.NewString()
	d := document.Document{ID: uuid.NewString(), LogID: logID, ClientID: "acme", MessageID: messageID,
		FileSHA256: make([]byte, 32), FileSize: 1234, Filename: "po.pdf", Subject: "PO " + messageID,
		Template: "contoso-po", SourceKey: "sources/" + logID + ".pdf", SourcePath: "s3://docintake/sources/" + logID + ".pdf"}
	job := jobs.Process(prefix, d, 1, time.Now())
	d, created, err := st.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	require.True(t, created)
	_, err = st.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateDLQ,
		Actor: "processor", Detail: "pdftext: no text layer and OCR found no words"})
	require.NoError(t, err)
	return d
}

func opsRequest(t *testing.T, method, u, token string, form url.Values, header ...string) *http.Response {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(t.Context(), method, u, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	// Redirects are part of what is checked.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

func readBody(t *testing.T, res *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestOpsAuth(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	d := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-auth")
	requeue := b.url + "/ops/documents/" + d.LogID + "/requeue"

	tests := []struct {
		name     string
		method   string
		url      string
		token    string
		form     url.Values
		header   []string
		status   int
		location string
	}{
		{name: "no token, API client", method: "GET", url: b.url + "/ops/", status: http.StatusUnauthorized},
		{name: "no token, browser goes to the login page", method: "GET", url: b.url + "/ops/",
			header: []string{"Accept", "text/html"}, status: http.StatusSeeOther, location: "/ops/login"},
		{name: "a client token is not an ops token", method: "GET", url: b.url + "/ops/", token: "tok-acme", status: http.StatusUnauthorized},
		{name: "ops token", method: "GET", url: b.url + "/ops/", token: opsToken, status: http.StatusOK},
		{name: "login page is public", method: "GET", url: b.url + "/ops/login", status: http.StatusOK},
		{name: "wrong login", method: "POST", url: b.url + "/ops/login", form: url.Values{"token": {"nope"}}, status: http.StatusUnauthorized},
		{name: "action without token", method: "POST", url: requeue, form: url.Values{}, status: http.StatusUnauthorized},
		{name: "unknown document", method: "GET", url: b.url + "/ops/documents/nope", token: opsToken, status: http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := opsRequest(t, tc.method, tc.url, tc.token, tc.form, tc.header...)
			require.Equal(t, tc.status, res.StatusCode)
			if tc.location != "" {
				require.Equal(t, tc.location, res.Header.Get("Location"))
			}
		})
	}

	t.Run("cookie login needs the CSRF field for actions", func(t *testing.T) {
		t.Parallel()
		res := opsRequest(t, "POST", b.url+"/ops/login", "", url.Values{"token": {opsToken}})
		require.Equal(t, http.StatusSeeOther, res.StatusCode)
		cookies := res.Cookies()
		require.Len(t, cookies, 1)
		ck := cookies[0]
		require.True(t, ck.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
		require.NotContains(t, ck.Value, opsToken, "the cookie must not carry the token itself")
		cookie := ck.Name + "=" + ck.Value

		page := opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", cookie)
		require.Equal(t, http.StatusOK, page.StatusCode)
		require.Contains(t, page.Header.Get("Content-Security-Policy"), "default-src 'none'")

		forged := opsRequest(t, "POST", requeue, "", url.Values{"csrf": {"forged"}}, "Cookie", cookie)
		require.Equal(t, http.StatusForbidden, forged.StatusCode)
		got, err := b.st.Document(t.Context(), d.ID)
		require.NoError(t, err)
		require.Equal(t, document.StateDLQ, got.State, "a forged form must not act")
	})

	t.Run("off without a token", func(t *testing.T) {
		t.Parallel()
		off := setupOps(t, "")
		res := opsRequest(t, "GET", off.url+"/ops/", "anything", nil)
		require.Equal(t, http.StatusNotFound, res.StatusCode)
	})
}

func TestOpsActions(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	ctx := t.Context()
	d := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-actions")

	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/", opsToken, nil))
	require.Contains(t, page, `id="dlq-`+d.LogID+`"`)
	require.Contains(t, page, "no text layer and OCR found no words", "the DLQ list shows the last error")

	res := opsRequest(t, "POST", b.url+"/ops/documents/"+d.LogID+"/requeue", opsToken, url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ops/documents/"+d.LogID+"?done=requeued", res.Header.Get("Location"))

	got, err := b.st.Document(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
	p, err := b.st.Processing(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, 2, p.ProcessSeq, "the re-queue is attempt 2 of the document")
	var msgIDs []string
	_, err = b.st.RelayOutbox(ctx, 10, 0, func(_ context.Context, batch []store.OutboxRow) []error {
		for _, m := range batch {
			msgIDs = append(msgIDs, m.MsgID)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{d.LogID + ":process:1", d.LogID + ":process:2"}, msgIDs)

	// Requeueing again is a conflict, not a second job.
	res = opsRequest(t, "POST", b.url+"/ops/documents/"+d.LogID+"/requeue", opsToken, url.Values{})
	require.Equal(t, http.StatusConflict, res.StatusCode)

	// A dlq document's client was told "failed"; redeliver repeats that
	// under a new webhook-id.
	d2 := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-redeliver")
	res = opsRequest(t, "POST", b.url+"/ops/documents/"+d2.LogID+"/redeliver", opsToken, url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	dels, err := b.st.Deliveries(ctx, d2.ID)
	require.NoError(t, err)
	require.Len(t, dels, 1)
	require.Equal(t, document.Status("failed"), dels[0].Status)

	detail := readBody(t, opsRequest(t, "GET", b.url+"/ops/documents/"+d2.LogID, opsToken, nil))
	require.Contains(t, detail, dels[0].ID, "the document page lists its deliveries")
	require.Contains(t, detail, "operator:ops-console", "the history names the operator")

	res = opsRequest(t, "POST", b.url+"/ops/documents/"+d2.LogID+"/give-up", opsToken, url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	got, err = b.st.Document(ctx, d2.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateFinishedWithFailure, got.State)
}

func TestOpsConsoleInChromium(t *testing.T) {
	t.Parallel()
	bin := repotest.Chromium(t)
	b := setupOps(t, opsToken)
	d := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-browser")

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		// No UserDataDir: chromedp makes a temporary profile and removes it
		// after the browser exits (t.TempDir's cleanup would race Chromium's
		// helper processes still writing to it).
		chromedp.Flag("no-default-browser-check", true))
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()

	row := `[id="dlq-` + d.LogID + `"]`
	var rowText string
	require.NoError(t, chromedp.Run(ctx,
		// Not logged in: the console sends the browser to its login page.
		chromedp.Navigate(b.url+"/ops/"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.SendKeys(`#token`, opsToken, chromedp.ByQuery),
		chromedp.Click(`#login`, chromedp.ByQuery),
		chromedp.WaitVisible(row, chromedp.ByQuery),
		chromedp.Text(row, &rowText, chromedp.ByQuery),
	), "open the console and see the DLQ entry")
	require.Contains(t, rowText, "acme")
	require.Contains(t, rowText, "no text layer and OCR found no words")

	var state, done string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`[id="requeue-`+d.LogID+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#done`, chromedp.ByQuery),
		chromedp.Text(`#state`, &state, chromedp.ByQuery),
		chromedp.Text(`#done`, &done, chromedp.ByQuery),
	), "press requeue")
	require.Equal(t, "received", state)
	require.Contains(t, done, "Re-queued")

	got, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)

	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(b.url+"/ops/"),
		chromedp.WaitVisible(`#dlq-empty`, chromedp.ByQuery),
	), "the DLQ is empty afterwards")
}

// A console session lives on the server: logout revokes it (a copy of the
// cookie opens nothing afterwards), it ends when it expires, and the cookie
// the browser keeps is only a random name for it.
func TestOpsSessionRevokedAndExpired(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	login := func(t *testing.T) string {
		t.Helper()
		res := opsRequest(t, "POST", b.url+"/ops/login", "", url.Values{"token": {opsToken}})
		require.Equal(t, http.StatusSeeOther, res.StatusCode)
		cks := res.Cookies()
		require.Len(t, cks, 1)
		require.Equal(t, 12*3600, cks[0].MaxAge, "the browser forgets the cookie when the session expires")
		return cks[0].Name + "=" + cks[0].Value
	}
	status := func(t *testing.T, cookie string) int {
		t.Helper()
		return opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", cookie).StatusCode
	}

	first, second := login(t), login(t)
	require.NotEqual(t, first, second, "every login opens its own session")
	require.Equal(t, http.StatusOK, status(t, first))
	require.Equal(t, http.StatusOK, status(t, second))

	res := opsRequest(t, "POST", b.url+"/ops/logout", "", url.Values{"csrf": {csrfOf(t, b.url, first)}}, "Cookie", first)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, http.StatusUnauthorized, status(t, first), "the cookie is worthless after logout")
	require.Equal(t, http.StatusOK, status(t, second), "logout ends only its own session")

	// Expiry is decided by the server's clock, not the browser's MaxAge:
	// age the session in the database rather than wait 12 hours.
	_, err := b.st.Pool().Exec(t.Context(), `UPDATE ops_sessions SET expires_at = now() - interval '1 second' WHERE revoked_at IS NULL`)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, status(t, second), "an expired session is refused")
	require.Equal(t, http.StatusUnauthorized, status(t, "docintake_ops=made-up"))
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrfOf reads the CSRF value the console's pages give the session of
// cookie (in every page's logout form).
func csrfOf(t *testing.T, base, cookie string) string {
	t.Helper()
	res := opsRequest(t, "GET", base+"/ops/", "", nil, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode)
	m := csrfField.FindStringSubmatch(readBody(t, res))
	require.NotNil(t, m, "no csrf field on the page")
	return m[1]
}

// The login token and the CSRF value count only in the POST body (the
// console has no JavaScript; its forms post them): in the query string
// they would land in access logs, proxies and browser history. Logout asks
// for the CSRF value too, so no other site can end the operator's session.
func TestOpsFormValuesOnlyFromBody(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	d := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-query")

	res := opsRequest(t, "POST", b.url+"/ops/login?token="+url.QueryEscape(opsToken), "", url.Values{})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "a token in the query string does not log in")
	require.Empty(t, res.Cookies())

	res = opsRequest(t, "POST", b.url+"/ops/login", "", url.Values{"token": {opsToken}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Len(t, res.Cookies(), 1)
	cookie := res.Cookies()[0].Name + "=" + res.Cookies()[0].Value
	csrf := csrfOf(t, b.url, cookie)
	loggedIn := func() bool {
		return opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", cookie).StatusCode == http.StatusOK
	}

	requeue := b.url + "/ops/documents/" + d.LogID + "/requeue"
	res = opsRequest(t, "POST", requeue+"?csrf="+csrf, "", url.Values{}, "Cookie", cookie)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "the CSRF value in the query string does not count")
	got, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateDLQ, got.State)

	res = opsRequest(t, "POST", b.url+"/ops/logout", "", url.Values{}, "Cookie", cookie)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "logout without the CSRF value")
	res = opsRequest(t, "POST", b.url+"/ops/logout?csrf="+csrf, "", url.Values{}, "Cookie", cookie)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "logout with the CSRF value in the query string")
	res = opsRequest(t, "POST", b.url+"/ops/logout", "", url.Values{"csrf": {"forged"}}, "Cookie", cookie)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "logout with a forged CSRF value")
	require.True(t, loggedIn(), "a refused logout leaves the session open")

	res = opsRequest(t, "POST", requeue, "", url.Values{"csrf": {csrf}}, "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "the CSRF value in the body acts")
	res = opsRequest(t, "POST", b.url+"/ops/logout", "", url.Values{"csrf": {csrf}}, "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ops/login", res.Header.Get("Location"))
	require.False(t, loggedIn(), "logout with the CSRF value in the body ends the session")
}

// Bidi controls in client text (kept in message ids and subjects, and in
// file names stored before uploads stripped them) are shown as visible
// escapes, so "\u202Efdp.exe" cannot pose as "exe.pdf" in the console.
func TestOpsShowsBidiControls(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	d := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-\u202Ebidi")
	_, err := b.st.Pool().Exec(t.Context(), `UPDATE documents SET filename = $2, subject = $3 WHERE id = $1`,
		d.ID, "order\u202Egpj.pdf", "PO \u2067x\u2069")
	require.NoError(t, err)
	res := opsRequest(t, "GET", b.url+"/ops/documents/"+d.LogID, opsToken, nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	page := html.UnescapeString(readBody(t, res))
	require.NotContains(t, page, "\u202E")
	require.NotContains(t, page, "\u2067")
	require.Contains(t, page, "order<U+202E>gpj.pdf")
	require.Contains(t, page, "m-<U+202E>bidi")
	require.Contains(t, page, "PO <U+2067>x<U+2069>")
}
