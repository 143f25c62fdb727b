package ingest_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/ingest"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

const apiTemplate = `issuer: Acme
keywords: [ACME ORDER]
fields:
  order_id:
    parser: regex
    regex: 'PO (\d+)'
docintake:
  name: acme-po
  party_ids: ["4711"]
`

func txtOnly(_ context.Context, _ string, b []byte) (string, error) { return string(b), nil }

func setupTemplatesAPI(t *testing.T) *bundle {
	t.Helper()
	return templatesAPIServer(t, ingest.Config{MaxUploadBytes: 1 << 20}, nil, nil)
}

// templatesAPIServer serves the template and reprocess API for clients acme
// and globex with cfg; extra, when set, is called before it serves (rate
// limits), listen, when set, wraps its listener.
func templatesAPIServer(t *testing.T, cfg ingest.Config, extra func(*ingest.Server, *store.Store, prometheus.Registerer),
	listen func(net.Listener) net.Listener) *bundle {
	t.Helper()
	st := storetest.Store(t)
	obj := objectstoretest.S3(t)
	for _, c := range []string{"acme", "globex"} {
		require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: c}, store.TokenHash("tok-"+c)))
	}
	health := observability.NewHealth(observability.Check{Name: "postgres", Func: st.Ping})
	reg := prometheus.NewRegistry()
	srv := ingest.New(cfg, st, obj, templates{}, zaptest.NewLogger(t), reg, health)
	srv.EnableTemplates(st, txtOnly)
	srv.EnableReprocess(st)
	if extra != nil {
		extra(srv, st, reg)
	}
	hs := httptest.NewUnstartedServer(srv.Handler())
	if listen != nil {
		hs.Listener = listen(hs.Listener)
	}
	hs.Start()
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, st: st, obj: obj, router: openAPIRouter(t)}
}

func (b *bundle) req(t *testing.T, method, path, token, ctype string, body []byte, hdr ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, b.url+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

func TestTemplatesAPI(t *testing.T) {
	t.Parallel()
	b := setupTemplatesAPI(t)
	_, err := b.st.PushTemplate(t.Context(), store.TemplatePush{Name: "global-po", Filename: "global-po.yml",
		Content: []byte(strings.ReplaceAll(apiTemplate, "acme-po", "global-po")), PushedBy: "ops"})
	require.NoError(t, err)

	// Create (If-None-Match: *), as YAML.
	r := b.do(t, b.req(t, http.MethodPut, "/templates/acme-po?comment=first", "tok-acme", "application/yaml", []byte(apiTemplate),
		"If-None-Match", "*"))
	require.Equal(t, http.StatusCreated, r.status, string(r.raw))
	require.EqualValues(t, 1, r.body["version"])
	require.Equal(t, "client", r.body["scope"])
	require.Equal(t, "client:acme", r.body["pushed_by"])
	require.Equal(t, "first", r.body["comment"])

	// The same again stores nothing.
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", []byte(apiTemplate)))
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, false, r.body["changed"])

	// Listing: the client's own and the global ones; another client sees
	// only the global one.
	r = b.do(t, b.req(t, http.MethodGet, "/templates", "tok-acme", "", nil))
	require.Equal(t, http.StatusOK, r.status)
	require.Len(t, r.body["templates"], 2)
	r = b.do(t, b.req(t, http.MethodGet, "/templates", "tok-globex", "", nil))
	require.Len(t, r.body["templates"], 1)
	r = b.do(t, b.req(t, http.MethodGet, "/templates/acme-po", "tok-globex", "", nil))
	require.Equal(t, http.StatusNotFound, r.status)
	require.Equal(t, "template_not_found", r.body["code"])
	// Global templates are not the client's to read or change here.
	r = b.do(t, b.req(t, http.MethodGet, "/templates/global-po", "tok-acme", "", nil))
	require.Equal(t, http.StatusNotFound, r.status)

	// Optimistic concurrency: a change based on v0 after v1 exists loses.
	v2 := strings.Replace(apiTemplate, `'PO (\d+)'`, `'(?:PO|Order) (\d+)'`, 1)
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", []byte(v2), "If-None-Match", "*"))
	require.Equal(t, http.StatusConflict, r.status, string(r.raw))
	require.Equal(t, "template_conflict", r.body["code"])
	r2, err := http.DefaultClient.Do(b.req(t, http.MethodGet, "/templates/acme-po", "tok-acme", "", nil))
	require.NoError(t, err)
	r2.Body.Close()
	require.Equal(t, `"v1"`, r2.Header.Get("ETag"))
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", []byte(v2), "If-Match", `"v1"`))
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	require.EqualValues(t, 2, r.body["version"])

	// Invalid: 422 template_invalid with line and key path.
	bad := strings.Replace(apiTemplate, `'PO (\d+)'`, `'PO ((\d+)'`, 1)
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/yaml", []byte(bad)))
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.raw))
	require.Equal(t, "template_invalid", r.body["code"])
	details := r.body["details"].(map[string]any)
	require.Equal(t, "6", details["line"]) // the regex line of apiTemplate
	require.Equal(t, "fields.order_id.regex", details["path"])
	// A body naming another template is refused too.
	r = b.do(t, b.req(t, http.MethodPut, "/templates/other", "tok-acme", "application/yaml", []byte(apiTemplate)))
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Equal(t, "template_invalid", r.body["code"])

	// Multipart with samples: a failing sample refuses, force stores.
	form := func(tmpl string, files map[string]string) (string, []byte) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		fw, err := w.CreateFormFile("template", "acme-po.yml")
		require.NoError(t, err)
		_, _ = fw.Write([]byte(tmpl))
		for name, content := range files {
			fw, err := w.CreateFormFile("samples", name)
			require.NoError(t, err)
			_, _ = fw.Write([]byte(content))
		}
		require.NoError(t, w.Close())
		return w.FormDataContentType(), buf.Bytes()
	}
	smp := map[string]string{
		"order.txt":  "ACME ORDER\nOrder 200\n",
		"order.json": `[{"issuer": "Acme", "order_id": "200", "currency": "EUR", "desc": "Invoice from Acme"}]`,
	}
	ct, body := form(apiTemplate, smp) // v1's regex misses "Order 200"
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", ct, body))
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.raw))
	require.Equal(t, "samples_failed", r.body["code"])
	require.Contains(t, r.body["details"].(map[string]any)["order.txt"], "order_id: missing")
	// A stale If-Match is a conflict, decided before the samples run: the
	// same failing samples answer 409, not samples_failed.
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", ct, body, "If-Match", `"v1"`))
	require.Equal(t, http.StatusConflict, r.status, string(r.raw))
	require.Equal(t, "template_conflict", r.body["code"])
	ct, body = form(v2, smp)
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", ct, body))
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	require.EqualValues(t, 3, r.body["version"], "same content, new samples: a new version")
	require.Equal(t, []any{"order.json", "order.txt"}, r.body["samples"])
	require.Equal(t, false, r.body["forced"])
	ct, body = form(apiTemplate, smp)
	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po?force=true", "tok-acme", ct, body))
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	require.Equal(t, true, r.body["forced"])

	r = b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", "application/pdf", []byte("%PDF")))
	require.Equal(t, http.StatusUnsupportedMediaType, r.status)

	// Delete hides it; the history stays in the store.
	res, err := http.DefaultClient.Do(b.req(t, http.MethodDelete, "/templates/acme-po", "tok-acme", "", nil))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	r = b.do(t, b.req(t, http.MethodGet, "/templates/acme-po", "tok-acme", "", nil))
	require.Equal(t, http.StatusNotFound, r.status)
	h, err := b.st.TemplateHistory(t.Context(), "acme", "acme-po")
	require.NoError(t, err)
	require.Len(t, h, 4)
	r = b.do(t, b.req(t, http.MethodDelete, "/templates/acme-po", "tok-acme", "", nil))
	require.Equal(t, http.StatusNotFound, r.status)
}

func TestReprocessAPI(t *testing.T) {
	t.Parallel()
	b := setupTemplatesAPI(t)
	ctx := t.Context()
	d := document.Document{ID: uuid.NewString(), LogID: uuid.NewString(), ClientID: "acme", MessageID: "m-1",
		FileSHA256: make([]byte, 32), FileSize: 1, Filename: "po.pdf", Subject: "PO", Template: "acme-po",
		SourceKey: "sources/x.pdf", SourcePath: "s3://b/sources/x.pdf"}
	d, _, err := b.st.CreateDocument(ctx, d, store.OutboxRow{Subject: "intake.process.acme", MsgID: d.LogID + ":process:1", Payload: []byte("x")})
	require.NoError(t, err)

	// Still being processed: conflict.
	r := b.do(t, b.req(t, http.MethodPost, "/documents/"+d.LogID+"/reprocess", "tok-acme", "", nil))
	require.Equal(t, http.StatusConflict, r.status, string(r.raw))
	for _, to := range []document.State{document.StateProcessedRejected, document.StateSentRejected, document.StateFinishedRejected} {
		reason := document.ReasonUnknownFormat
		d, err = b.st.Transition(ctx, store.Change{DocumentID: d.ID, From: d.State, To: to, Reason: &reason, Actor: "test"})
		require.NoError(t, err)
	}
	// Another client's document is not found, as for GET.
	r = b.do(t, b.req(t, http.MethodPost, "/documents/"+d.LogID+"/reprocess", "tok-globex", "", nil))
	require.Equal(t, http.StatusNotFound, r.status)
	require.Equal(t, "document_not_found", r.body["code"])

	r = b.do(t, b.req(t, http.MethodPost, "/documents/"+d.LogID+"/reprocess", "tok-acme", "", nil))
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	require.Equal(t, d.LogID, r.body["log_id"])
	got, err := b.st.Document(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
	require.Empty(t, got.StatusReason)
	n, err := b.st.CurrentAttempt(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	ev, err := b.st.Events(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, "client:acme", ev[len(ev)-1].Actor)
}
