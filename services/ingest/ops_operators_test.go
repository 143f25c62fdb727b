package ingest_test

import (
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/ingest"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// setupConsole serves the API with the console of cfg on an httptest
// server, with two clients, acme and globex; the auto-refresh is long so a
// reload never races the browser test's clicks.
func setupConsole(t *testing.T, cfg ingest.OpsConfig) *opsBundle {
	t.Helper()
	st, js, qcfg, objs := consoleServers(t, document.Client{})
	srv := ingest.New(ingest.Config{SubjectPrefix: qcfg.SubjectPrefix}, st, objs, templates{"contoso-po": nil},
		zaptest.NewLogger(t), prometheus.NewRegistry(), observability.NewHealth())
	cfg.Stream, cfg.Refresh = qcfg.Stream, 10*time.Minute
	srv.EnableOps(cfg, st, js)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &opsBundle{url: hs.URL, st: st, js: js, qcfg: qcfg}
}

// consoleServers starts what a console test runs on (PostgreSQL, JetStream,
// an object store) with two clients, acme and globex, made from proto
// (its ID replaced) with the tokens "tok-<id>".
func consoleServers(t *testing.T, proto document.Client) (*store.Store, jetstream.JetStream, queue.Config, objectstore.Store) {
	t.Helper()
	st := storetest.Store(t)
	js := queuetest.JetStream(t)
	qcfg := queuetest.Ensure(t, js, nil)
	objs, err := objectstore.NewFS(t.TempDir())
	require.NoError(t, err)
	for _, id := range []string{"acme", "globex"} {
		c := proto
		c.ID = id
		require.NoError(t, st.UpsertClient(t.Context(), c, store.TokenHash("tok-"+id)))
	}
	return st, js, qcfg, objs
}

// addOperator creates an operator account with token ("" none) and clients
// (nil: every client).
func addOperator(t *testing.T, st *store.Store, name, token string, clients ...string) {
	t.Helper()
	var h *[32]byte
	if token != "" {
		sum := store.TokenHash(token)
		h = &sum
	}
	require.NoError(t, st.AddOperator(t.Context(), store.Operator{Name: name, Clients: clients}, h))
}

// globexDLQ is a dlq document of client globex.
func globexDLQ(t *testing.T, b *opsBundle, messageID string) document.Document {
	t.Helper()
	d := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, messageID)
	_, err := b.st.Pool().Exec(t.Context(), `UPDATE documents SET client_id = 'globex' WHERE id = $1`, d.ID)
	require.NoError(t, err)
	d.ClientID = "globex"
	return d
}

// loginAs logs in with token and returns the session's Cookie header.
func loginAs(t *testing.T, base, token string) string {
	t.Helper()
	res := opsRequest(t, "POST", base+"/ops/login", "", url.Values{"token": {token}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Len(t, res.Cookies(), 1)
	return res.Cookies()[0].Name + "=" + res.Cookies()[0].Value
}

// whoIs is the name the page header shows as logged in.
func whoIs(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `id="operator" title="logged in as">`)
	require.True(t, ok, "the page header names no operator")
	name, _, _ := strings.Cut(rest, "<")
	return strings.TrimSpace(name)
}

func lastActor(t *testing.T, st *store.Store, documentID string) string {
	t.Helper()
	evs, err := st.Events(t.Context(), documentID)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	return evs[len(evs)-1].Actor
}

// An operator logs in with a token of its own; only the token's SHA-256 is
// stored; what it does is recorded under its name, and the page header
// says who is logged in. The shared token stays the unnamed ops-console.
func TestOpsOperatorToken(t *testing.T) {
	t.Parallel()
	b := setupConsole(t, ingest.OpsConfig{Token: opsToken})
	const token = "dio_alice-secret-0123456789abcdef"
	addOperator(t, b.st, "alice", token)

	var stored []byte
	var row string
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT token_sha256, o::text FROM operators o WHERE name = 'alice'`).
		Scan(&stored, &row))
	want := sha256.Sum256([]byte(token))
	require.Equal(t, want[:], stored, "the token is stored as its SHA-256")
	require.NotContains(t, row, token, "the row does not hold the token")
	require.NotContains(t, row, strings.TrimPrefix(token, "dio_"))

	cookie := loginAs(t, b.url, token)
	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", cookie))
	require.Equal(t, "alice", whoIs(t, page))
	var sessOp string
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT operator FROM ops_sessions WHERE revoked_at IS NULL`).Scan(&sessOp))
	require.Equal(t, "alice", sessOp, "the session records its operator")

	d := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-alice")
	csrf := csrfOf(t, b.url, cookie)
	res := opsRequest(t, "POST", b.url+"/ops/documents/"+d.LogID+"/give-up", "", url.Values{"csrf": {csrf}}, "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "operator:alice", lastActor(t, b.st, d.ID))
	history := readBody(t, opsRequest(t, "GET", b.url+"/ops/documents/"+d.LogID, "", nil, "Cookie", cookie))
	require.Contains(t, history, "<td>operator:alice</td>", "the history shows who gave up")

	// As a bearer token (scripts) too.
	d2 := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-alice-bearer")
	res = opsRequest(t, "POST", b.url+"/ops/documents/"+d2.LogID+"/requeue", token, url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "operator:alice", lastActor(t, b.st, d2.ID))

	shared := readBody(t, opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", loginAs(t, b.url, opsToken)))
	require.Equal(t, "ops-console", whoIs(t, shared))
	require.Equal(t, http.StatusUnauthorized, opsRequest(t, "POST", b.url+"/ops/login", "", url.Values{"token": {"dio_nobody"}}).StatusCode)
}

// An operator limited to acme sees acme's rows only: globex's documents
// are absent from every list and answer 404 to the page, the find box and
// every action, which then leave them untouched.
func TestOpsOperatorLimitedToClient(t *testing.T) {
	t.Parallel()
	b := setupConsole(t, ingest.OpsConfig{Token: opsToken})
	addOperator(t, b.st, "bob", "dio_bob-token-0123456789", "acme")
	mine := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-acme")
	theirs := globexDLQ(t, b, "m-globex")
	cookie := loginAs(t, b.url, "dio_bob-token-0123456789")

	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", cookie))
	require.Equal(t, "bob", whoIs(t, page))
	require.Contains(t, page, `id="dlq-`+mine.LogID+`"`)
	require.NotContains(t, page, theirs.LogID, "globex's document appears nowhere on the page")
	require.NotContains(t, page, "<td>globex</td>")
	require.Contains(t, page, `<tr id="state-dlq" class="alert"><td>dlq</td><td class="num">1</td>`, "only acme's dlq document is counted")
	require.NotContains(t, page, `id="queues"`, "the system-wide numbers are for operators of every client")

	for _, path := range []string{"/ops/documents/" + theirs.LogID, "/ops/documents?log_id=" + theirs.LogID} {
		res := opsRequest(t, "GET", b.url+path, "", nil, "Cookie", cookie)
		if res.StatusCode == http.StatusSeeOther { // the find box redirects to the page
			res = opsRequest(t, "GET", b.url+res.Header.Get("Location"), "", nil, "Cookie", cookie)
		}
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
		require.NotContains(t, readBody(t, res), "globex")
	}
	unknown := readBody(t, opsRequest(t, "GET", b.url+"/ops/documents/nope", "", nil, "Cookie", cookie))
	other := readBody(t, opsRequest(t, "GET", b.url+"/ops/documents/"+theirs.LogID, "", nil, "Cookie", cookie))
	clock := regexp.MustCompile(`<span class="clock">[^<]*</span>`)
	require.Equal(t, clock.ReplaceAllString(strings.ReplaceAll(unknown, "nope", theirs.LogID), ""), clock.ReplaceAllString(other, ""),
		"another client's document looks like an unknown one")

	csrf := csrfOf(t, b.url, cookie)
	for _, action := range []string{"requeue", "give-up", "redeliver", "reprocess"} {
		res := opsRequest(t, "POST", b.url+"/ops/documents/"+theirs.LogID+"/"+action, "", url.Values{"csrf": {csrf}}, "Cookie", cookie)
		require.Equal(t, http.StatusNotFound, res.StatusCode, action)
	}
	got, err := b.st.Document(t.Context(), theirs.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateDLQ, got.State, "no action reached globex's document")

	res := opsRequest(t, "GET", b.url+"/ops/documents/"+mine.LogID, "", nil, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode)
	res = opsRequest(t, "POST", b.url+"/ops/documents/"+mine.LogID+"/requeue", "", url.Values{"csrf": {csrf}}, "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "operator:bob", lastActor(t, b.st, mine.ID))

	// Templates: the global ones and acme's own, with acme's use of them.
	ctx := t.Context()
	for _, client := range []string{"", "acme", "globex"} {
		_, err := b.st.PushTemplate(ctx, store.TemplatePush{Name: "tpl-" + client, ClientID: client, Filename: "t.yml",
			Content: []byte("t"), PushedBy: "ops"})
		require.NoError(t, err)
	}
	global, err := b.st.Template(ctx, "", "tpl-")
	require.NoError(t, err)
	_, _, err = b.st.PinAttempt(ctx, theirs.ID, store.AttemptTemplate{Attempt: 1, TemplateID: global.ID, Name: "tpl-",
		Version: 1, SHA256: global.SHA256}, document.StateDLQ, "processor")
	require.NoError(t, err)
	tpls := readBody(t, opsRequest(t, "GET", b.url+"/ops/templates", "", nil, "Cookie", cookie))
	require.Contains(t, tpls, `data-name="tpl-"`)
	require.Contains(t, tpls, `data-name="tpl-acme"`)
	require.NotContains(t, tpls, "tpl-globex")
	require.NotContains(t, tpls, "1 failed", "globex's document is not counted")
	require.Contains(t, readBody(t, opsRequest(t, "GET", b.url+"/ops/templates", opsToken, nil)), "1 failed")

	// The shared token and an unlimited operator see both.
	all := readBody(t, opsRequest(t, "GET", b.url+"/ops/", opsToken, nil))
	require.Contains(t, all, theirs.LogID)
	require.Contains(t, all, `id="queues"`)

	// A changed limit applies to the open session at its next request.
	require.NoError(t, b.st.SetOperatorClients(t.Context(), "bob", []string{"globex"}))
	require.Equal(t, http.StatusOK, opsRequest(t, "GET", b.url+"/ops/documents/"+theirs.LogID, "", nil, "Cookie", cookie).StatusCode)
	require.Equal(t, http.StatusNotFound, opsRequest(t, "GET", b.url+"/ops/documents/"+mine.LogID, "", nil, "Cookie", cookie).StatusCode)
}

// Removing an operator ends its sessions at once; rotating its token ends
// those opened with the old token, and only the new token logs in.
func TestOpsOperatorRemovedOrRotated(t *testing.T) {
	t.Parallel()
	b := setupConsole(t, ingest.OpsConfig{Enabled: true})
	addOperator(t, b.st, "carol", "dio_carol-old-0123456789")
	addOperator(t, b.st, "dave", "dio_dave-0123456789")
	status := func(cookie string) int {
		return opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", cookie).StatusCode
	}
	carol, dave := loginAs(t, b.url, "dio_carol-old-0123456789"), loginAs(t, b.url, "dio_dave-0123456789")
	require.Equal(t, http.StatusOK, status(carol))

	newToken := store.TokenHash("dio_carol-new-0123456789")
	require.NoError(t, b.st.SetOperatorToken(t.Context(), "carol", &newToken))
	require.Equal(t, http.StatusUnauthorized, status(carol), "the old token's session ended")
	require.Equal(t, http.StatusUnauthorized, opsRequest(t, "GET", b.url+"/ops/", "dio_carol-old-0123456789", nil).StatusCode)
	carol = loginAs(t, b.url, "dio_carol-new-0123456789")
	require.Equal(t, http.StatusOK, status(carol))

	require.NoError(t, b.st.RemoveOperator(t.Context(), "carol"))
	require.Equal(t, http.StatusUnauthorized, status(carol), "a removed operator's session ends")
	require.Equal(t, http.StatusUnauthorized, opsRequest(t, "GET", b.url+"/ops/", "dio_carol-new-0123456789", nil).StatusCode)
	require.Equal(t, http.StatusOK, status(dave), "other operators stay logged in")

	// Without INTAKE_OPS_TOKEN no empty or made-up token is the shared one.
	for _, tok := range []string{"", " ", opsToken} {
		require.Equal(t, http.StatusUnauthorized, opsRequest(t, "POST", b.url+"/ops/login", "", url.Values{"token": {tok}}).StatusCode, tok)
	}
}

// The trusted user header names the operator only when configured and
// only on connections from a trusted proxy; the user needs an account
// (whose client limits apply), and the proxy's browser forms need the
// CSRF value like a cookie's.
func TestOpsTrustedUserHeader(t *testing.T) {
	t.Parallel()
	const header = "X-Forwarded-User"
	proxied := setupConsole(t, ingest.OpsConfig{TrustedUserHeader: header}) // trusted: loopback (default)
	addOperator(t, proxied.st, "erin@example.com", "", "acme")
	mine := dlqDocument(t, proxied.st, proxied.qcfg.SubjectPrefix, "m-proxy")
	theirs := globexDLQ(t, proxied, "m-proxy-globex")

	res := opsRequest(t, "GET", proxied.url+"/ops/", "", nil, header, "erin@example.com", "Accept", "text/html")
	require.Equal(t, http.StatusOK, res.StatusCode)
	page := readBody(t, res)
	require.Equal(t, "erin@example.com", whoIs(t, page))
	require.NotContains(t, page, theirs.LogID)
	require.NotContains(t, page, `action="/ops/logout"`, "logging out is the proxy's business")
	require.Len(t, res.Cookies(), 1, "the page opens a session for its forms' CSRF value")
	cookie := res.Cookies()[0].Name + "=" + res.Cookies()[0].Value
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m)

	requeue := proxied.url + "/ops/documents/" + mine.LogID + "/requeue"
	res = opsRequest(t, "POST", requeue, "", url.Values{}, header, "erin@example.com", "Cookie", cookie)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "a form without the CSRF value is refused")
	res = opsRequest(t, "POST", requeue, "", url.Values{"csrf": {m[1]}}, header, "erin@example.com")
	require.Equal(t, http.StatusForbidden, res.StatusCode, "the CSRF value belongs to the session's cookie")
	res = opsRequest(t, "POST", requeue, "", url.Values{"csrf": {m[1]}}, header, "someone-else", "Cookie", cookie)
	require.Equal(t, http.StatusForbidden, res.StatusCode, "a user without an account is refused")
	res = opsRequest(t, "POST", requeue, "", url.Values{"csrf": {m[1]}}, header, "erin@example.com", "Cookie", cookie)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "operator:erin@example.com", lastActor(t, proxied.st, mine.ID))
	require.Equal(t, http.StatusNotFound,
		opsRequest(t, "GET", proxied.url+"/ops/documents/"+theirs.LogID, "", nil, header, "erin@example.com").StatusCode)
	require.Equal(t, http.StatusUnauthorized, opsRequest(t, "GET", proxied.url+"/ops/", "", nil, "Cookie", cookie).StatusCode,
		"a proxy session is nothing without the proxy's header")

	// Configured, but the connection comes from 127.0.0.1 and only ::1
	// is trusted; and not configured at all: the header is ignored.
	untrusted := setupConsole(t, ingest.OpsConfig{TrustedUserHeader: header, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("::1/128")}})
	addOperator(t, untrusted.st, "erin@example.com", "")
	unset := setupConsole(t, ingest.OpsConfig{Token: opsToken})
	addOperator(t, unset.st, "erin@example.com", "")
	for name, b := range map[string]*opsBundle{"untrusted peer": untrusted, "not configured": unset} {
		res := opsRequest(t, "GET", b.url+"/ops/", "", nil, header, "erin@example.com")
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, name)
		res = opsRequest(t, "GET", b.url+"/ops/", "", nil, header, "erin@example.com", "X-Forwarded-For", "127.0.0.1")
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, name+": X-Forwarded-For does not make a peer trusted")
	}
}
