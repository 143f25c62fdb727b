package ingest_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/ingest"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// countingConn counts the bytes the server reads from one connection:
// headers, what handlers read, what net/http reads after them. Close
// reports the count.
type countingConn struct {
	net.Conn
	n      atomic.Int64
	once   sync.Once
	closed chan<- int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// CloseWrite keeps net/http's half-close of a refused request.
func (c *countingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *countingConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.closed <- c.n.Load() })
	return err
}

// countingListener sends what the server read of each connection on
// closed when it closes it.
type countingListener struct {
	net.Listener
	closed chan<- int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, closed: l.closed}, nil
}

// A 20 MB template (one keyword: the probe's body that grew RSS by 600 MB)
// is refused with 413 template_too_large having read at most the limit,
// whether its length is declared, undeclared (chunked) or it is a part of
// a multipart PUT; samples over their limit are 413 samples_too_large.
// Nothing is stored.
func TestTemplateTooLargeRefusedUnread(t *testing.T) {
	t.Parallel()
	closed := make(chan int64, 1)
	const limit, samplesLimit = 256 << 10, 1 << 20 // INTAKE_TEMPLATE_MAX_BYTES's default
	b := templatesAPIServer(t, ingest.Config{MaxUploadBytes: 64 << 20,
		TemplateLimits: config.TemplateLimits{SamplesMaxBytes: samplesLimit}}, nil,
		func(l net.Listener) net.Listener { return countingListener{l, closed} })
	const huge = 20 << 20
	// What the server may read besides the limit: headers, chunk framing
	// and read-ahead (64 KiB), the lingering close's up to 1 MiB of a body
	// of undeclared size (so a client still sending reads the 413 instead
	// of a reset; middleware.go unreadDrainMax) and the up to 256 KiB
	// net/http reads of a body left unread after the answer. Still a
	// fraction of the 20 MiB sent.
	const drain = 64<<10 + 1<<20 + 256<<10
	yaml := func() *endless {
		return &endless{prefix: []byte("issuer: Acme\nkeywords: ['"), n: huge,
			suffix: []byte("']\nfields:\n  order_id: 'PO (\\d+)'\ndocintake:\n  name: acme-po\n")}
	}
	const boundary = "XBOUNDARYX"
	// form is a multipart PUT whose last part, named part, has n bytes; a
	// samples part follows a valid template part.
	form := func(part, filename string, n int64) *endless {
		head := func(name, file string) string {
			return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"" + file + "\"\r\n\r\n"
		}
		prefix := head(part, filename)
		if part != "template" {
			prefix = head("template", "acme-po.yml") + apiTemplate + "\r\n" + prefix
		}
		return &endless{prefix: []byte(prefix), n: n, suffix: []byte("\r\n--" + boundary + "--\r\n")}
	}
	for _, c := range []struct {
		label   string
		body    *endless
		ctype   string
		chunked bool
		code    string
		maxRead int64
	}{
		{"declared YAML", yaml(), "application/yaml", false, "template_too_large", 64 << 10},
		{"chunked YAML", yaml(), "application/yaml", true, "template_too_large", limit + drain},
		{"chunked multipart template", form("template", "acme-po.yml", huge), "multipart/form-data; boundary=" + boundary, true,
			"template_too_large", limit + drain},
		{"chunked multipart samples", form("samples", "big.txt", 2*samplesLimit), "multipart/form-data; boundary=" + boundary, true,
			"samples_too_large", limit + samplesLimit + drain},
	} {
		req, err := http.NewRequest(http.MethodPut, b.url+"/templates/acme-po", c.body)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer tok-acme")
		req.Header.Set("Content-Type", c.ctype)
		req.ContentLength = int64(len(c.body.prefix)+len(c.body.suffix)) + c.body.n
		if c.chunked {
			req.ContentLength = -1
		}
		r := b.do(t, req)
		// Every refusal closes its connection; what the server read of it
		// is then final.
		select {
		case read := <-closed:
			require.LessOrEqual(t, read, c.maxRead, "%s: the server read %d bytes", c.label, read)
		case <-time.After(time.Minute):
			t.Fatalf("%s: the server kept the connection", c.label)
		}
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%s: %s", c.label, r.raw)
		require.Equal(t, c.code, r.body["code"], c.label)
	}
	list, err := b.st.ListTemplates(t.Context(), store.TemplatesFilter{All: true})
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")
}

// A client has at most INTAKE_TEMPLATE_MAX_COUNT live templates: a new one
// beyond is 422 template_limit_reached; a new version of one it has is
// not a new template, and a deleted one frees its place.
func TestTemplateCountLimit(t *testing.T) {
	t.Parallel()
	b := templatesAPIServer(t, ingest.Config{TemplateLimits: config.TemplateLimits{MaxCount: 2}}, nil, nil)
	put := func(token, name, order string) response {
		body := strings.NewReplacer("acme-po", name, `["4711"]`, "[]", "PO ", order).Replace(apiTemplate)
		return b.do(t, b.req(t, http.MethodPut, "/templates/"+name, token, "application/yaml", []byte(body)))
	}
	require.Equal(t, http.StatusCreated, put("tok-acme", "one", "PO ").status)
	require.Equal(t, http.StatusCreated, put("tok-acme", "two", "PO ").status)
	r := put("tok-acme", "three", "PO ")
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.raw))
	require.Equal(t, "template_limit_reached", r.body["code"])
	require.Equal(t, map[string]any{"limit": "2"}, r.body["details"])
	r = put("tok-acme", "two", "Order ")
	require.Equal(t, http.StatusOK, r.status, "a new version of a template the client has: %s", r.raw)
	require.EqualValues(t, 2, r.body["version"])
	require.Equal(t, http.StatusCreated, put("tok-globex", "three", "PO ").status, "the limit is per client")

	del, err := http.DefaultClient.Do(b.req(t, http.MethodDelete, "/templates/one", "tok-acme", "", nil))
	require.NoError(t, err)
	del.Body.Close()
	require.Equal(t, http.StatusNoContent, del.StatusCode)
	require.Equal(t, http.StatusCreated, put("tok-acme", "three", "PO ").status, "a deleted template frees its place")
}

// The regexes of one template are bounded in number
// (INTAKE_TEMPLATE_MAX_PATTERNS) and in total length
// (INTAKE_TEMPLATE_MAX_PATTERN_BYTES): each is what the template costs
// compiled. Over either: 422 with the code naming which, nothing stored.
func TestTemplatePatternLimits(t *testing.T) {
	t.Parallel()
	b := templatesAPIServer(t, ingest.Config{TemplateLimits: config.TemplateLimits{MaxPatterns: 6, MaxPatternBytes: 200}}, nil, nil)
	// apiTemplate has 2 regexes (a keyword and order_id); each field adds one.
	withFields := func(n int) []byte {
		var f strings.Builder
		for i := range n {
			fmt.Fprintf(&f, "  f%d: 'F%d (\\d+)'\n", i, i)
		}
		return []byte(strings.Replace(apiTemplate, "docintake:", f.String()+"docintake:", 1))
	}
	r := b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", withFields(5)))
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.raw))
	require.Equal(t, "template_too_many_patterns", r.body["code"])
	require.Equal(t, map[string]any{"limit": "6", "count": "7"}, r.body["details"])

	long := []byte(strings.Replace(apiTemplate, "[ACME ORDER]", "['"+strings.Repeat("ACME ORDER ", 20)+"']", 1))
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", long))
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.raw))
	require.Equal(t, "template_patterns_too_long", r.body["code"])
	require.Equal(t, "200", r.body["details"].(map[string]any)["limit"])

	list, err := b.st.ListTemplates(t.Context(), store.TemplatesFilter{All: true})
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", withFields(4)))
	require.Equal(t, http.StatusCreated, r.status, "6 regexes, 6 allowed: %s", r.raw)
}

// Template changes (PUT, DELETE) are limited per client: past
// INTAKE_TEMPLATE_CHANGE_RATE_LIMIT in the window, 429 rate_limited with
// Retry-After; reading templates and another client are not limited.
func TestTemplateChangeRateLimit(t *testing.T) {
	t.Parallel()
	const window = 24 * time.Hour // windows start at UTC midnight: a run never straddles one in practice
	b := templatesAPIServer(t, ingest.Config{}, func(s *ingest.Server, st *store.Store, reg prometheus.Registerer) {
		s.EnableTemplateChangeRateLimit(3, window, st, reg)
	}, nil)
	put := func(token string) response {
		return b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", token, "application/yaml", []byte(apiTemplate)))
	}
	require.Equal(t, http.StatusCreated, put("tok-acme").status)
	require.Equal(t, http.StatusOK, put("tok-acme").status)
	del, err := http.DefaultClient.Do(b.req(t, http.MethodDelete, "/templates/acme-po", "tok-acme", "", nil))
	require.NoError(t, err)
	del.Body.Close()
	require.Equal(t, http.StatusNoContent, del.StatusCode)
	for _, method := range []string{http.MethodPut, http.MethodDelete} {
		res, err := http.DefaultClient.Do(b.req(t, method, "/templates/acme-po", "tok-acme", "application/yaml", []byte(apiTemplate)))
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusTooManyRequests, res.StatusCode, method)
		retry, err := strconv.Atoi(res.Header.Get("Retry-After"))
		require.NoError(t, err)
		require.True(t, retry >= 1 && retry <= int(window/time.Second), "Retry-After %d within the window", retry)
	}
	r := put("tok-acme")
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Equal(t, "rate_limited", r.body["code"])
	_, err = b.st.Template(t.Context(), "acme", "acme-po")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err), "the refused PUT stored nothing")
	require.Equal(t, http.StatusOK, b.do(t, b.req(t, http.MethodGet, "/templates", "tok-acme", "", nil)).status, "reading is not limited")
	require.Equal(t, http.StatusCreated, put("tok-globex").status, "the limit is per client")
}

// A client over its upload rate (INTAKE_UPLOAD_RATE_LIMIT) cannot
// reprocess at will or run samples: a reprocess request and each sample
// document of a PUT take one of its uploads.
func TestReprocessAndSamplesCountAsUploads(t *testing.T) {
	t.Parallel()
	const window = 24 * time.Hour
	b := templatesAPIServer(t, ingest.Config{}, func(s *ingest.Server, st *store.Store, reg prometheus.Registerer) {
		s.EnableUploadRateLimit(3, window, st, reg)
	}, nil)
	ctx := t.Context()
	d := document.Document{ID: uuid.NewString(), LogID: uuid.NewString(), ClientID: "acme", MessageID: "m-1",
		FileSHA256: make([]byte, 32), FileSize: 1, Filename: "po.pdf", Subject: "PO", Template: "acme-po",
		SourceKey: "sources/x.pdf", SourcePath: "s3://b/sources/x.pdf"}
	d, _, err := b.st.CreateDocument(ctx, d, store.OutboxRow{Subject: "intake.process.acme", MsgID: d.LogID + ":process:1", Payload: []byte("x")})
	require.NoError(t, err)
	reason := document.ReasonUnknownFormat
	for _, to := range []document.State{document.StateProcessedRejected, document.StateSentRejected, document.StateFinishedRejected} {
		d, err = b.st.Transition(ctx, store.Change{DocumentID: d.ID, From: d.State, To: to, Reason: &reason, Actor: "test"})
		require.NoError(t, err)
	}
	reprocess := func() response {
		return b.do(t, b.req(t, http.MethodPost, "/documents/"+d.LogID+"/reprocess", "tok-acme", "", nil))
	}
	require.Equal(t, http.StatusAccepted, reprocess().status) // 1 of 3

	// Two sample documents (X.json is their expected output, no run): 3 of 3.
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for name, content := range map[string]string{"acme-po.yml": apiTemplate, "a.txt": "ACME ORDER\nPO 1\n", "b.txt": "ACME ORDER\nPO 2\n",
		"a.json": `[{"issuer": "Acme", "order_id": "1", "currency": "EUR", "desc": "Invoice from Acme"}]`,
		"b.json": `[{"issuer": "Acme", "order_id": "2", "currency": "EUR", "desc": "Invoice from Acme"}]`} {
		part := "samples"
		if name == "acme-po.yml" {
			part = "template"
		}
		fw, err := w.CreateFormFile(part, name)
		require.NoError(t, err)
		_, _ = fw.Write([]byte(content))
	}
	require.NoError(t, w.Close())
	r := b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", w.FormDataContentType(), buf.Bytes()))
	require.Equal(t, http.StatusCreated, r.status, string(r.raw))

	r = reprocess()
	require.Equal(t, http.StatusTooManyRequests, r.status, string(r.raw))
	require.Equal(t, "rate_limited", r.body["code"])
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", w.FormDataContentType(), buf.Bytes()))
	require.Equal(t, http.StatusTooManyRequests, r.status, "samples run no more: %s", r.raw)
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", []byte(apiTemplate)))
	require.Equal(t, http.StatusOK, r.status, "a change without samples reads no document: %s", r.raw)
	n, err := b.st.CurrentAttempt(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the refused reprocess started no attempt")
}
