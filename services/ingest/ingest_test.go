package ingest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/ingest"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) { objectstoretest.Main(m) }

// templates is a fixed catalogue for the API tests; the template package's
// own loader is tested in pkg/template and wired in standalone's tests.
type templates map[string][]string

func (ts templates) Resolve(_, name, partyID string) (string, bool) {
	if name != "" {
		_, ok := ts[name]
		return name, ok
	}
	for n, ids := range ts {
		for _, id := range ids {
			if id == partyID {
				return n, true
			}
		}
	}
	return "", false
}

type bundle struct {
	url    string
	st     *store.Store
	obj    *objectstore.S3
	handed chan []store.OutboxRow // what the store hands the relay
	router routers.Router
}

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

func openAPIRouter(t *testing.T) routers.Router {
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(ingest.OpenAPI())
		if err != nil {
			specErr = err
			return
		}
		if err = doc.Validate(loader.Context); err != nil {
			specErr = err
			return
		}
		doc.Servers = nil // match any host (httptest's random port)
		specRouter, specErr = gorillamux.NewRouter(doc)
	})
	require.NoError(t, specErr, "openapi.yaml must load and validate")
	return specRouter
}

func setup(t *testing.T, mutate ...func(*ingest.Config)) *bundle {
	t.Helper()
	st := storetest.Store(t)
	obj := objectstoretest.S3(t)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme"}, store.TokenHash("tok-acme")))
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "globex"}, store.TokenHash("tok-globex")))
	cfg := ingest.Config{MaxUploadBytes: 25 << 20, SubjectPrefix: "intake"}
	for _, m := range mutate {
		m(&cfg)
	}
	handed := make(chan []store.OutboxRow, 1000)
	st.HandOutboxTo(func(rows []store.OutboxRow) { handed <- rows })
	reg := prometheus.NewRegistry()
	health := observability.NewHealth(observability.Check{Name: "postgres", Func: st.Ping}, observability.Check{Name: "s3", Func: obj.Ping})
	srv := ingest.New(cfg, st, obj, templates{"contoso-po": {"CONTOSO"}, "orderx-comfort": {"ORDERX"}},
		zaptest.NewLogger(t), reg, health)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &bundle{url: hs.URL, st: st, obj: obj, handed: handed, router: openAPIRouter(t)}
}

type response struct {
	status int
	body   map[string]any
	raw    []byte
}

// do sends req and checks the response against openapi.yaml (every response
// this suite receives on a documented route must match the spec).
func (b *bundle) do(t *testing.T, req *http.Request) response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0], "all responses are JSON: %s", raw)
	route, params, err := b.router.FindRoute(req)
	if err == nil {
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
			Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(raw)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true},
		}
		require.NoError(t, openapi3filter.ValidateResponse(t.Context(), in), "response violates openapi.yaml: %d %s", res.StatusCode, raw)
	}
	out := response{status: res.StatusCode, raw: raw}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

type form struct {
	fields   [][2]string // in order; repeated names allowed
	file     []byte
	noFile   bool
	filename string
}

func (b *bundle) multipart(t *testing.T, token string, f form) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, kv := range f.fields {
		require.NoError(t, w.WriteField(kv[0], kv[1]))
	}
	if !f.noFile {
		h := textproto.MIMEHeader{}
		name := f.filename
		if name == "" {
			name = "order.pdf"
		}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
		h.Set("Content-Type", "application/pdf")
		p, err := w.CreatePart(h)
		require.NoError(t, err)
		_, _ = p.Write(f.file)
	}
	require.NoError(t, w.Close())
	req, err := http.NewRequest(http.MethodPost, b.url+"/incoming", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

func (b *bundle) jsonReq(t *testing.T, token string, body any) *http.Request {
	t.Helper()
	var raw []byte
	if s, ok := body.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(http.MethodPost, b.url+"/incoming-json", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

func (b *bundle) get(t *testing.T, token, logID string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.url+"/documents/"+logID, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return b.do(t, req)
}

var orderPDF = pdftexttest.PDF([]string{"PURCHASE ORDER", "PO Number: 4711", "Date: 2026-11-21"})

func fields(kv ...string) [][2]string {
	var out [][2]string
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, [2]string{kv[i], kv[i+1]})
	}
	return out
}

func TestUploadMultipartAccepted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "m-1", "subject", "PO 4711", "template", "contoso-po"),
		file: orderPDF, filename: `..\..\etc/passwd\u0000.pdf`}))
	require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
	logID := res.body["log_id"].(string)
	require.NotEmpty(t, logID)
	require.NotEmpty(t, res.body["status"])
	handed := <-b.handed

	d, err := b.st.DocumentByLogID(t.Context(), "acme", logID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, d.State)
	require.Equal(t, "contoso-po", d.Template)
	require.Equal(t, "PO 4711", d.Subject)
	require.NotContains(t, d.Filename, "/")
	require.NotContains(t, d.Filename, "..\\")
	// The PDF is in the object store under a key made from the log id only.
	// The key is stored with the document, the URI shown names it.
	require.Regexp(t, `^sources/\d{4}/\d{2}/\d{2}/`+logID+`\.pdf$`, d.SourceKey)
	require.Equal(t, "s3://"+b.obj.Bucket()+"/"+d.SourceKey, d.SourcePath)
	rc, err := b.obj.Get(t.Context(), d.SourceKey)
	require.NoError(t, err)
	stored, _ := io.ReadAll(rc)
	rc.Close()
	require.Equal(t, orderPDF, stored)
	// The job is in the outbox, committed with the row.
	var id int64
	var subject, msgID string
	var payload []byte
	var headers map[string]string
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT id, subject, msg_id, payload, headers FROM outbox`).
		Scan(&id, &subject, &msgID, &payload, &headers))
	require.Equal(t, "intake.process.acme", subject)
	require.Equal(t, logID+":process:1", msgID)
	// After the commit the store handed that very row to the relay, with
	// the headers it stored (the upload's trace context, when traced).
	require.Len(t, handed, 1)
	require.Equal(t, store.OutboxRow{ID: id, Subject: subject, MsgID: msgID, Payload: payload, Headers: headers}, handed[0])
	job, err := jobs.ParseProcess(payload)
	require.NoError(t, err)
	require.Equal(t, logID, job.GetLogId())

	got := b.get(t, "tok-acme", logID)
	require.Equal(t, http.StatusOK, got.status)
	require.Equal(t, map[string]any{
		"id": d.ID, "filename": d.Filename, "message_id": "m-1", "document_date": nil, "source_path": d.SourcePath,
		"result_json_path": nil, "result_path": nil, "document_state": "received",
		"template": "contoso-po", // docintake's extension: the template named at upload
	}, got.body)
}

func TestUploadPartyIDAndJSON(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "p-1", "subject", "s", "party_id", "ORDERX", "result_mode", "no_items"), file: orderPDF}))
	require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
	d, err := b.st.DocumentByLogID(t.Context(), "acme", res.body["log_id"].(string))
	require.NoError(t, err)
	require.Equal(t, "orderx-comfort", d.Template)
	require.Equal(t, "ORDERX", d.PartyID)
	require.Equal(t, document.ResultModeNoItems, d.ResultMode)

	for i, enc := range []string{
		base64.StdEncoding.EncodeToString(orderPDF),
		base64.RawStdEncoding.EncodeToString(orderPDF),
		wrap76(base64.StdEncoding.EncodeToString(orderPDF)),
	} {
		res = b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": enc, "filename": nil, "message_id": fmt.Sprint("j-", i),
			"template": "contoso-po", "subject": "s", "result_mode": nil}))
		require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
		d, err = b.st.DocumentByLogID(t.Context(), "acme", res.body["log_id"].(string))
		require.NoError(t, err)
		require.Equal(t, int64(len(orderPDF)), d.FileSize)
		require.Equal(t, "document.pdf", d.Filename)
		require.Equal(t, document.ResultMode(""), d.ResultMode)
	}
}

func wrap76(s string) string {
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	b.WriteString(s)
	return b.String()
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: orderPDF}
	for name, mod := range map[string]func(*http.Request){
		"missing":      func(r *http.Request) { r.Header.Del("Authorization") },
		"unknown":      func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") },
		"basic scheme": func(r *http.Request) { r.Header.Set("Authorization", "Basic tok-acme") },
		"empty bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") },
		"query token": func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "access_token=tok-acme&token=tok-acme"
		},
	} {
		req := b.multipart(t, "tok-acme", f)
		mod(req)
		res := b.do(t, req)
		require.Equal(t, http.StatusUnauthorized, res.status, name)
		require.Equal(t, "unauthorized", res.body["code"], name)
	}
	require.Equal(t, http.StatusUnauthorized, b.get(t, "", "x").status)
	require.Equal(t, http.StatusUnauthorized, b.do(t, b.jsonReq(t, "bad", map[string]any{})).status)
	// The scheme is case-insensitive.
	req := b.multipart(t, "", f)
	req.Header.Set("Authorization", "bearer tok-acme")
	require.Equal(t, http.StatusAccepted, b.do(t, req).status)
	var n int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM documents`).Scan(&n))
	require.Equal(t, 1, n)
}

func TestNotAPDF(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, content := range map[string][]byte{
		"text":        []byte("hello, this is not a pdf"),
		"png":         {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'},
		"pdf late":    append([]byte("junk\n"), orderPDF...),
		"lower case":  []byte("%pdf-1.4\n"),
		"almost":      []byte("%PDF"),
		"zip as .pdf": {'P', 'K', 3, 4},
	} {
		res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", name, "subject", "s", "template", "contoso-po"), file: content}))
		require.Equal(t, http.StatusUnsupportedMediaType, res.status, name)
		require.Equal(t, "not_a_pdf", res.body["code"], name)
		res = b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(content),
			"message_id": name, "template": "contoso-po", "subject": "s"}))
		require.Equal(t, http.StatusUnsupportedMediaType, res.status, name)
	}
	// The request's own content type is checked too.
	req := b.jsonReq(t, "tok-acme", map[string]any{})
	req.Header.Set("Content-Type", "text/plain")
	res := b.do(t, req)
	require.Equal(t, http.StatusUnsupportedMediaType, res.status)
	require.Equal(t, "unsupported_content_type", res.body["code"])
	req = b.multipart(t, "tok-acme", form{fields: fields("message_id", "m"), file: orderPDF})
	req.Header.Set("Content-Type", "application/json")
	require.Equal(t, http.StatusUnsupportedMediaType, b.do(t, req).status)
	// A new request: the first one's body has been sent. Sending it again
	// worked only when the client reused the connection (a write that failed
	// before any byte is retried with GetBody); on a busy machine the client
	// sometimes does not, and the request then fails with "ContentLength=…
	// with Body length 0" before the server sees it.
	req = b.multipart(t, "tok-acme", form{fields: fields("message_id", "m"), file: orderPDF})
	req.Header.Del("Content-Type")
	require.Equal(t, http.StatusUnsupportedMediaType, b.do(t, req).status)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	long := strings.Repeat("x", 257)
	multipartCases := []struct {
		name   string
		form   form
		fields []string // fields named in details
	}{
		{"missing message_id", form{fields: fields("subject", "s", "template", "contoso-po"), file: orderPDF}, []string{"message_id"}},
		{"blank message_id", form{fields: fields("message_id", "  ", "subject", "s", "template", "contoso-po"), file: orderPDF}, []string{"message_id"}},
		{"missing subject", form{fields: fields("message_id", "m", "template", "contoso-po"), file: orderPDF}, []string{"subject"}},
		{"missing file", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), noFile: true}, []string{"file"}},
		{"empty file", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: []byte{}}, []string{"file"}},
		{"both", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po", "party_id", "CONTOSO"), file: orderPDF}, []string{"template", "party_id"}},
		{"neither", form{fields: fields("message_id", "m", "subject", "s"), file: orderPDF}, []string{"template"}},
		{"result_mode", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po", "result_mode", "all_items"), file: orderPDF}, []string{"result_mode"}},
		{"message_id too long", form{fields: fields("message_id", long, "subject", "s", "template", "contoso-po"), file: orderPDF}, []string{"message_id"}},
		{"message_id invalid utf-8", form{fields: fields("message_id", "m\xff\xfe", "subject", "s", "template", "contoso-po"), file: orderPDF}, []string{"message_id"}},
		{"message_id control chars", form{fields: fields("message_id", "m\r\nX-Injected: 1", "subject", "s", "template", "contoso-po"), file: orderPDF}, []string{"message_id"}},
		{"subject invalid utf-8", form{fields: fields("message_id", "m", "subject", "\xc3\x28", "template", "contoso-po"), file: orderPDF}, []string{"subject"}},
		{"repeated field", form{fields: fields("message_id", "m", "message_id", "n", "subject", "s", "template", "contoso-po"), file: orderPDF}, []string{"message_id"}},
		{"all missing", form{noFile: true}, []string{"message_id", "subject", "template", "file"}},
	}
	for _, c := range multipartCases {
		res := b.do(t, b.multipart(t, "tok-acme", c.form))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, c.name)
		require.Equal(t, "validation_failed", res.body["code"], c.name)
		details, _ := res.body["details"].(map[string]any)
		for _, f := range c.fields {
			require.Contains(t, details, f, c.name)
		}
	}
	// Exactly 256 characters (multi-byte ones count once) is fine.
	ok := strings.Repeat("ä", 256)
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", ok, "subject", "s", "template", "contoso-po"), file: orderPDF}))
	require.Equal(t, http.StatusAccepted, res.status, string(res.raw))

	pdf64 := base64.StdEncoding.EncodeToString(orderPDF)
	jsonCases := []struct {
		name   string
		body   any
		fields []string
	}{
		{"invalid base64", map[string]any{"file_base64": "%%%not base64%%%", "message_id": "m", "template": "contoso-po", "subject": "s"}, []string{"file_base64"}},
		{"empty file", map[string]any{"file_base64": "", "message_id": "m", "template": "contoso-po", "subject": "s"}, []string{"file_base64"}},
		{"missing file", map[string]any{"message_id": "m", "template": "contoso-po", "subject": "s"}, []string{"file_base64"}},
		{"missing template", map[string]any{"file_base64": pdf64, "message_id": "m", "subject": "s"}, []string{"template"}},
		{"party_id not in JSON", map[string]any{"file_base64": pdf64, "message_id": "m", "subject": "s", "party_id": "CONTOSO"}, []string{"party_id", "template"}},
		{"missing message_id", map[string]any{"file_base64": pdf64, "template": "contoso-po", "subject": "s"}, []string{"message_id"}},
		{"missing subject", map[string]any{"file_base64": pdf64, "template": "contoso-po", "message_id": "m"}, []string{"subject"}},
		{"result_mode", map[string]any{"file_base64": pdf64, "template": "contoso-po", "message_id": "m", "subject": "s", "result_mode": "x"}, []string{"result_mode"}},
		{"message_id a number", map[string]any{"file_base64": pdf64, "template": "contoso-po", "message_id": 12, "subject": "s"}, []string{"message_id"}},
		{"not json", "{\"file_base64\": ", []string{"body"}},
		{"array", "[1,2]", []string{"body"}},
		{"two objects", `{"subject":"a"} {"subject":"b"}`, []string{"body"}},
		{"deeply nested", `{"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, []string{"body"}},
	}
	for _, c := range jsonCases {
		res := b.do(t, b.jsonReq(t, "tok-acme", c.body))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", c.name, res.raw)
		details, _ := res.body["details"].(map[string]any)
		for _, f := range c.fields {
			require.Contains(t, details, f, c.name)
		}
	}
	var n int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM documents`).Scan(&n))
	require.Equal(t, 1, n, "nothing but the one valid upload was stored")
}

func TestTemplateNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, f := range [][2]string{{"template", "nope"}, {"party_id", "NOPE"}} {
		res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", f[1], "subject", "s", f[0], f[1]), file: orderPDF}))
		require.Equal(t, http.StatusBadRequest, res.status)
		require.Equal(t, "template_not_found", res.body["code"])
	}
	res := b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(orderPDF), "message_id": "j", "template": "nope", "subject": "s"}))
	require.Equal(t, http.StatusBadRequest, res.status)
	require.Equal(t, "template_not_found", res.body["code"])
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *ingest.Config) { c.MaxUploadBytes = 64 << 10 })
	big := append(append([]byte{}, orderPDF...), bytes.Repeat([]byte("x"), 100<<10)...)
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: big}))
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	require.Equal(t, "payload_too_large", res.body["code"])
	res = b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(big), "message_id": "j", "template": "contoso-po", "subject": "s"}))
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	// Without Content-Length (chunked) the limit holds while reading.
	req := b.multipart(t, "tok-acme", form{fields: fields("message_id", "c", "subject", "s", "template", "contoso-po"), file: big})
	req.ContentLength = -1
	req.Body = io.NopCloser(req.Body)
	res = b.do(t, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
}

// endless streams a multipart upload of n bytes without holding it in memory.
type endless struct {
	prefix, suffix []byte
	n, off         int64
}

func (e *endless) Read(p []byte) (int, error) {
	total := int64(len(e.prefix)) + e.n + int64(len(e.suffix))
	if e.off >= total {
		return 0, io.EOF
	}
	i := 0
	for i < len(p) && e.off < total {
		switch {
		case e.off < int64(len(e.prefix)):
			p[i] = e.prefix[e.off]
		case e.off < int64(len(e.prefix))+e.n:
			p[i] = 'x'
		default:
			p[i] = e.suffix[e.off-int64(len(e.prefix))-e.n]
		}
		i++
		e.off++
	}
	return i, nil
}

// Not parallel: it measures the process's allocations while the 30 MiB
// upload is refused, which other tests running at the same time would blur.
func TestTooLargeHeapBounded(t *testing.T) {
	b := setup(t)
	boundary := "XBOUNDARYX"
	prefix := []byte("--" + boundary + "\r\nContent-Disposition: form-data; name=\"message_id\"\r\n\r\nbig\r\n--" + boundary +
		"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n")
	suffix := []byte("\r\n--" + boundary + "--\r\n")
	for _, chunked := range []bool{false, true} {
		body := &endless{prefix: prefix, suffix: suffix, n: 30 << 20}
		req, err := http.NewRequest(http.MethodPost, b.url+"/incoming", body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		req.Header.Set("Authorization", "Bearer tok-acme")
		if !chunked {
			req.ContentLength = int64(len(prefix)+len(suffix)) + body.n
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := http.DefaultClient.Do(req)
		if err == nil { // the server may close the connection before reading everything
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, string(raw))
		}
		runtime.ReadMemStats(&after)
		// The body is 30 MiB; what the server (and this client) allocated
		// while refusing it must stay far below that.
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "chunked=%v", chunked)
	}
}

func TestDocumentNotFoundAndTenantIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: orderPDF}))
	require.Equal(t, http.StatusAccepted, res.status)
	logID := res.body["log_id"].(string)

	foreign := b.get(t, "tok-globex", logID)
	unknown := b.get(t, "tok-globex", "00000000-0000-0000-0000-000000000000")
	require.Equal(t, http.StatusNotFound, foreign.status)
	require.Equal(t, http.StatusNotFound, unknown.status)
	require.Equal(t, "document_not_found", foreign.body["code"])
	// Another client learns nothing: the body does not differ but for the id.
	require.Equal(t, strings.ReplaceAll(string(foreign.raw), logID, "ID"), strings.ReplaceAll(string(unknown.raw), "00000000-0000-0000-0000-000000000000", "ID"))
	require.Equal(t, http.StatusOK, b.get(t, "tok-acme", logID).status)
	// The same message_id is independent per client.
	res = b.do(t, b.multipart(t, "tok-globex", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: []byte("%PDF-other")}))
	require.Equal(t, http.StatusAccepted, res.status)
	require.NotEqual(t, logID, res.body["log_id"])
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := form{fields: fields("message_id", "dup", "subject", "s", "template", "contoso-po"), file: orderPDF}
	first := b.do(t, b.multipart(t, "tok-acme", f))
	require.Equal(t, http.StatusAccepted, first.status)
	again := b.do(t, b.multipart(t, "tok-acme", f))
	require.Equal(t, http.StatusAccepted, again.status)
	require.Equal(t, first.body["log_id"], again.body["log_id"])
	// The JSON variant shares the message_id space.
	viaJSON := b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(orderPDF), "message_id": "dup", "template": "contoso-po", "subject": "s"}))
	require.Equal(t, http.StatusAccepted, viaJSON.status)
	require.Equal(t, first.body["log_id"], viaJSON.body["log_id"])

	other := b.do(t, b.multipart(t, "tok-acme", form{fields: f.fields, file: append([]byte("%PDF-1.4 other"), 1)}))
	require.Equal(t, http.StatusUnprocessableEntity, other.status)
	require.Equal(t, "duplicate_message_id", other.body["code"])

	var docs, outbox int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM documents`).Scan(&docs))
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM outbox`).Scan(&outbox))
	require.Equal(t, 1, docs)
	require.Equal(t, 1, outbox, "one job for one document")
	// A small retry is stored before CreateDocument finds the message_id
	// taken; its object is deleted again.
	require.Equal(t, 1, b.objectCount(t), "retries left objects behind")
}

// Retries are answered like the first upload whatever path they take: a
// retry naming a template that is not (or no longer) configured, and a large
// upload (spooled to disk, answered from the existing row before anything
// is stored) repeated with the same and with different content.
func TestIdempotencyRetryPaths(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := form{fields: fields("message_id", "m1", "subject", "s", "template", "contoso-po"), file: orderPDF}
	first := b.do(t, b.multipart(t, "tok-acme", f))
	require.Equal(t, http.StatusAccepted, first.status, string(first.raw))
	gone := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "m1", "subject", "s", "template", "gone"), file: orderPDF}))
	require.Equal(t, http.StatusAccepted, gone.status, string(gone.raw))
	require.Equal(t, first.body["log_id"], gone.body["log_id"])
	goneOther := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "m1", "subject", "s", "template", "gone"),
		file: append([]byte("%PDF-1.4 other"), 1)}))
	require.Equal(t, http.StatusUnprocessableEntity, goneOther.status, string(goneOther.raw))
	require.Equal(t, "duplicate_message_id", goneOther.body["code"])
	unknown := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "m2", "subject", "s", "template", "gone"), file: orderPDF}))
	require.Equal(t, http.StatusBadRequest, unknown.status, string(unknown.raw))
	require.Equal(t, "template_not_found", unknown.body["code"])

	big := append(append([]byte{}, orderPDF...), bytes.Repeat([]byte("% padding\n"), 300_000)...) // 3 MB: spooled to disk
	bf := form{fields: fields("message_id", "big", "subject", "s", "template", "contoso-po"), file: big}
	bigFirst := b.do(t, b.multipart(t, "tok-acme", bf))
	require.Equal(t, http.StatusAccepted, bigFirst.status, string(bigFirst.raw))
	bigAgain := b.do(t, b.multipart(t, "tok-acme", bf))
	require.Equal(t, http.StatusAccepted, bigAgain.status, string(bigAgain.raw))
	require.Equal(t, bigFirst.body["log_id"], bigAgain.body["log_id"])
	other := append(append([]byte{}, big...), 'x')
	bigOther := b.do(t, b.multipart(t, "tok-acme", form{fields: bf.fields, file: other}))
	require.Equal(t, http.StatusUnprocessableEntity, bigOther.status, string(bigOther.raw))
	require.Equal(t, "duplicate_message_id", bigOther.body["code"])

	var docs int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM documents`).Scan(&docs))
	require.Equal(t, 2, docs)
	require.Equal(t, 2, b.objectCount(t), "one object per document, none left by retries")
}

// objectCount is the number of objects in the test's bucket.
func (b *bundle) objectCount(t *testing.T) int {
	t.Helper()
	out, err := b.obj.Client().ListObjectsV2(t.Context(), listInput(b.obj.Bucket()))
	require.NoError(t, err)
	return len(out.Contents)
}

func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 20
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = b.multipart(t, "tok-acme", form{fields: fields("message_id", "race", "subject", "s", "template", "contoso-po"), file: orderPDF})
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = b.do(t, reqs[i])
		}()
	}
	close(start)
	wg.Wait()
	for _, r := range results {
		require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
		require.Equal(t, results[0].body["log_id"], r.body["log_id"])
	}
	var docs, outbox int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM documents`).Scan(&docs))
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM outbox`).Scan(&outbox))
	require.Equal(t, 1, docs)
	require.Equal(t, 1, outbox)
	// Losers' objects were removed: exactly one source object remains.
	out, err := b.obj.Client().ListObjectsV2(t.Context(), listInput(b.obj.Bucket()))
	require.NoError(t, err)
	require.Len(t, out.Contents, 1)
}

// TestMalformedCorpus uploads every hostile file of the shared corpus: each
// is accepted (it starts with %PDF-, so it is the processor's problem) or
// refused with 415, and the server keeps serving.
func TestMalformedCorpus(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, "corpus", "malformed")
	b := setup(t)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		content, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		want := http.StatusUnsupportedMediaType
		if bytes.HasPrefix(content, []byte("%PDF-")) {
			want = http.StatusAccepted
		}
		res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", e.Name(), "subject", "s", "template", "contoso-po"), file: content, filename: e.Name()}))
		require.Equal(t, want, res.status, "%s: %s", e.Name(), res.raw)
		res = b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(content), "message_id": e.Name(), "template": "contoso-po", "subject": "s", "filename": e.Name()}))
		require.Equal(t, want, res.status, "%s (json): %s", e.Name(), res.raw)
	}
	require.Equal(t, http.StatusAccepted, b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "after", "subject", "s", "template", "contoso-po"), file: orderPDF})).status)
}

func TestHealthMetricsOpenAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		res, err := http.Get(b.url + p)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, p)
	}
	require.Equal(t, http.StatusAccepted, b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: orderPDF})).status)
	res, err := http.Get(b.url + "/metrics")
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(raw), `docintake_http_requests_total{code="202",method="POST",route="/incoming"} 1`)
	require.Contains(t, string(raw), `docintake_ingest_upload_bytes_count 1`)
	require.Contains(t, string(raw), `docintake_http_request_duration_seconds_bucket{method="POST",route="/incoming"`)

	res, err = http.Get(b.url + "/openapi.yaml")
	require.NoError(t, err)
	raw, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, ingest.OpenAPI(), raw)

	res, err = http.Get(b.url + "/no/such/route")
	require.NoError(t, err)
	raw, _ = io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.JSONEq(t, `{"code":"not_found","message":"Not Found"}`, string(raw))
}

func TestReadyzFailsWhenDependencyDown(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	health := observability.NewHealth(observability.Check{Name: "postgres", Func: st.Ping},
		observability.Check{Name: "nats", Func: func(context.Context) error { return fmt.Errorf("connection refused") }})
	srv := ingest.New(ingest.Config{}, st, objectstoretest.S3(t), templates{}, zaptest.NewLogger(t), prometheus.NewRegistry(), health)
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	res, err := http.Get(hs.URL + "/readyz")
	require.NoError(t, err)
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	require.JSONEq(t, `{"status":"unavailable","failed":["nats"]}`, string(raw))
}

func TestBasePath(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *ingest.Config) { c.BasePath = "/api/v1" })
	req := b.multipart(t, "tok-acme", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: orderPDF})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode, "the root path is not served when a base path is set")
	req = b.multipart(t, "tok-acme", form{fields: fields("message_id", "m", "subject", "s", "template", "contoso-po"), file: orderPDF})
	req.URL.Path = "/api/v1/incoming"
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusAccepted, res.StatusCode)
}
