package ingest_test

// Hostile requests against a running ingest, beyond what ingest_test.go
// covers (oversize bodies, the 30 MiB heap check, deep JSON nesting, query
// tokens, wrong content types, invalid UTF-8 in message_id and subject):
// each gets its documented status and JSON error, and the server keeps
// serving.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/ingest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// runServer starts the API with Server.Run (the real http.Server and its
// timeouts, not httptest) and returns its base URL.
func runServer(t *testing.T, cfg ingest.Config) (string, *store.Store) {
	t.Helper()
	st := storetest.Store(t)
	obj := objectstoretest.S3(t)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme"}, store.TokenHash("tok-acme")))
	srv := ingest.New(cfg, st, obj, templates{"contoso-po": {"CONTOSO"}}, zaptest.NewLogger(t),
		prometheus.NewRegistry(), observability.NewHealth())
	ctx, cancel := context.WithCancel(context.Background())
	bound := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, "127.0.0.1:0", bound) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	select {
	case addr := <-bound:
		return "http://" + addr, st
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	return "", nil
}

func validUpload(t *testing.T, url, messageID string) int {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	require.NoError(t, w.WriteField("message_id", messageID))
	require.NoError(t, w.WriteField("subject", "s"))
	require.NoError(t, w.WriteField("template", "contoso-po"))
	fw, err := w.CreateFormFile("file", "order.pdf")
	require.NoError(t, err)
	_, _ = fw.Write(orderPDF)
	require.NoError(t, w.Close())
	req, err := http.NewRequest(http.MethodPost, url+"/incoming", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer tok-acme")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// A client that never finishes its headers is disconnected after
// ReadHeaderTimeout, and the server goes on serving others meanwhile.
func TestSlowlorisHeaders(t *testing.T) {
	t.Parallel()
	url, _ := runServer(t, ingest.Config{ReadHeaderTimeout: 300 * time.Millisecond})
	var conns []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = io.WriteString(c, "POST /incoming HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-acme\r\nX-Slow: ")
		require.NoError(t, err)
		conns = append(conns, c)
	}
	require.Equal(t, http.StatusAccepted, validUpload(t, url, "during-slowloris"))
	for _, c := range conns {
		// The deadline only keeps a broken server from hanging the test:
		// the server must close the connection long before it.
		require.NoError(t, c.SetReadDeadline(time.Now().Add(60*time.Second)))
		rest, err := io.ReadAll(c)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "server kept a slow client's connection open")
		if len(rest) > 0 { // net/http may answer 408 before closing
			require.Contains(t, string(rest), "408")
		}
	}
	require.Equal(t, http.StatusAccepted, validUpload(t, url, "after-slowloris"))
}

// Headers beyond MaxHeaderBytes are refused by net/http itself (431, plain
// text: it answers before any handler runs; documented in SECURITY.md).
func TestOversizeHeaders(t *testing.T) {
	t.Parallel()
	url, _ := runServer(t, ingest.Config{})
	req, err := http.NewRequest(http.MethodPost, url+"/incoming", strings.NewReader("x"))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok-acme")
	req.Header.Set("X-Huge", strings.Repeat("a", 200<<10))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	require.Equal(t, http.StatusAccepted, validUpload(t, url, "after-huge-headers"))
}

func TestTenThousandFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var kv []string
	kv = append(kv, "message_id", "many", "subject", "s", "template", "contoso-po")
	for i := range 10000 {
		kv = append(kv, fmt.Sprintf("f%d", i), "v")
	}
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields(kv...), file: orderPDF}))
	require.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.raw))
	require.Equal(t, "validation_failed", res.body["code"])
	require.Contains(t, res.body["details"], "body")
	// 10,000 file parts and 10,000 repeats of a known field fare the same.
	kv = kv[:6]
	for range 10000 {
		kv = append(kv, "message_id", "again")
	}
	res = b.do(t, b.multipart(t, "tok-acme", form{fields: fields(kv...), file: orderPDF}))
	require.Equal(t, http.StatusUnprocessableEntity, res.status)
	require.Equal(t, http.StatusAccepted, b.do(t, b.multipart(t, "tok-acme",
		form{fields: fields("message_id", "after", "subject", "s", "template", "contoso-po"), file: orderPDF})).status)
}

// Every string field with bytes that are not UTF-8: 422 naming the field
// (multipart) or the body (JSON), never a 5xx and never a stored row.
// A file name is only a display name: it is cleaned, not refused.
func TestInvalidUTF8EveryField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	base := map[string]string{"message_id": "m", "subject": "s", "template": "contoso-po"}
	for _, field := range []string{"message_id", "subject", "template", "party_id", "result_mode"} {
		f := map[string]string{}
		for k, v := range base {
			f[k] = v
		}
		if field == "party_id" {
			delete(f, "template")
		}
		f[field] = "bad\xff\xfe"
		var kv []string
		for k, v := range f {
			kv = append(kv, k, v)
		}
		res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields(kv...), file: orderPDF}))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", field, res.raw)
		require.Contains(t, res.body["details"], field, field)

		if field == "party_id" {
			continue // not a JSON field
		}
		vals := map[string]string{"message_id": "m", "subject": "s", "template": "contoso-po", "result_mode": "no_items"}
		vals[field] = "bad\xff\xfe" // raw bytes: json.Marshal would replace them
		body := fmt.Sprintf(`{"file_base64":"%s","message_id":"%s","subject":"%s","template":"%s","result_mode":"%s"}`,
			base64.StdEncoding.EncodeToString(orderPDF), vals["message_id"], vals["subject"], vals["template"], vals["result_mode"])
		res = b.do(t, b.jsonReq(t, "tok-acme", body))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "json %s: %s", field, res.raw)
		require.Equal(t, map[string]any{"body": "must be valid UTF-8"}, res.body["details"], field)
	}
	// Invalid UTF-8 in the JSON file name and in the base64 string.
	for _, body := range []string{
		`{"file_base64":"JVBERi0x","message_id":"j","subject":"s","template":"contoso-po","filename":"` + "\xc0\xaf" + `.pdf"}`,
		`{"file_base64":"JVBE` + "\xff" + `Ri0x","message_id":"j","subject":"s","template":"contoso-po"}`,
	} {
		res := b.do(t, b.jsonReq(t, "tok-acme", body))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.raw))
	}
	// Multipart file name: cleaned to valid UTF-8.
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, kv := range fields("message_id", "fn", "subject", "s", "template", "contoso-po") {
		require.NoError(t, w.WriteField(kv[0], kv[1]))
	}
	// The raw bytes (the form helper quotes with %q, which escapes them).
	part, err := w.CreatePart(textproto.MIMEHeader{"Content-Disposition": {"form-data; name=\"file\"; filename=\"na\xffme.pdf\""}})
	require.NoError(t, err)
	_, _ = part.Write(orderPDF)
	require.NoError(t, w.Close())
	req, err := http.NewRequest(http.MethodPost, b.url+"/incoming", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer tok-acme")
	res := b.do(t, req)
	require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
	d, err := b.st.DocumentByLogID(t.Context(), "acme", res.body["log_id"].(string))
	require.NoError(t, err)
	require.Equal(t, "na\uFFFDme.pdf", d.Filename)
}

// Path traversal and control characters in filename and message_id: the
// file name is reduced to a clean base name, the message_id is an opaque
// id (control characters refused), and neither reaches an object key.
func TestPathTraversalAndControlCharacters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, want := range map[string]string{
		"../../../../etc/passwd":       "passwd",
		`..\..\windows\system32\x.pdf`: "x.pdf",
		"/abs/path/order.pdf":          "order.pdf",
		"..":                           "document.pdf",
		"evil\x00.pdf\r\nX: y":         "evil.pdfX: y",
		"\x1b[31mred.pdf":              "[31mred.pdf",
		"a/./b/../c.pdf":               "c.pdf",
		"order\u202Egpj.pdf":           "ordergpj.pdf", // would show as "orderfdp.jpg"
		"\u2067x\u200F.pdf\u2069":      "x.pdf",
	} {
		for _, viaJSON := range []bool{false, true} {
			if !viaJSON && strings.ContainsAny(name, "\x00\r\n\x1b") {
				continue // multipart headers cannot carry these bytes literally
			}
			if !viaJSON && strings.IndexFunc(name, func(r rune) bool { return r > 0x7f }) >= 0 {
				continue // b.multipart quotes the name with %q, which escapes these runes
			}
			mid := fmt.Sprintf("%x-%v", name, viaJSON)
			var res response
			if viaJSON {
				res = b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(orderPDF),
					"message_id": mid, "subject": "s", "template": "contoso-po", "filename": name}))
			} else {
				res = b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", mid, "subject", "s", "template", "contoso-po"),
					file: orderPDF, filename: name}))
			}
			require.Equal(t, http.StatusAccepted, res.status, "%q: %s", name, res.raw)
			logID := res.body["log_id"].(string)
			d, err := b.st.DocumentByLogID(t.Context(), "acme", logID)
			require.NoError(t, err)
			require.Equal(t, want, d.Filename, "%q json=%v", name, viaJSON)
			require.Regexp(t, `^s3://[^/]+/sources/\d{4}/\d{2}/\d{2}/`+logID+`\.pdf$`, d.SourcePath)
		}
	}
	// message_id: traversal is just text, control characters are refused.
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "../../etc/passwd", "subject", "s", "template", "contoso-po"), file: orderPDF}))
	require.Equal(t, http.StatusAccepted, res.status)
	d, err := b.st.DocumentByLogID(t.Context(), "acme", res.body["log_id"].(string))
	require.NoError(t, err)
	require.NotContains(t, d.SourcePath, "etc")
	for _, mid := range []string{"a\x00b", "a\x7fb", "a\u0085b", "a\tb"} {
		res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", mid, "subject", "s", "template", "contoso-po"), file: orderPDF}))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "%q", mid)
		require.Contains(t, res.body["details"], "message_id")
		res = b.do(t, b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(orderPDF),
			"message_id": mid, "subject": "s", "template": "contoso-po"}))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "json %q", mid)
	}
}

// A JSON body far over the limit whose base64 string never ends is refused
// with 413 after reading at most the limit; the heap grows with the limit,
// not with the body.
func TestHugeBase64HeapBounded(t *testing.T) {
	b := setup(t, func(c *ingest.Config) { c.MaxUploadBytes = 4 << 20 })
	prefix := []byte(`{"message_id":"huge","subject":"s","template":"contoso-po","file_base64":"`)
	for _, chunked := range []bool{false, true} {
		body := &endless{prefix: prefix, suffix: []byte(`"}`), n: 64 << 20}
		req, err := http.NewRequest(http.MethodPost, b.url+"/incoming-json", body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer tok-acme")
		if !chunked {
			req.ContentLength = int64(len(prefix)+2) + body.n
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, string(raw))
		}
		runtime.ReadMemStats(&after)
		// 64 MiB were offered; the JSON decoder may buffer up to the 4 MiB
		// limit (doubling as it grows).
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "chunked=%v", chunked)
	}
}

func TestContentTypeVariants(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := form{fields: fields("message_id", "ct", "subject", "s", "template", "contoso-po"), file: orderPDF}
	for ct, want := range map[string]int{
		"multipart/form-data":               http.StatusUnprocessableEntity, // no boundary
		"multipart/mixed; boundary=x":       http.StatusUnsupportedMediaType,
		"application/x-www-form-urlencoded": http.StatusUnsupportedMediaType,
		"text/html; charset=utf-8":          http.StatusUnsupportedMediaType,
		";;;":                               http.StatusUnsupportedMediaType,
	} {
		req := b.multipart(t, "tok-acme", f)
		req.Header.Set("Content-Type", ct)
		res := b.do(t, req)
		require.Equal(t, want, res.status, "%q: %s", ct, res.raw)
		require.NotEmpty(t, res.body["code"], ct)
	}
	// Parameters and case do not matter for JSON.
	for i, ct := range []string{"application/json; charset=utf-8", "Application/JSON"} {
		req := b.jsonReq(t, "tok-acme", map[string]any{"file_base64": base64.StdEncoding.EncodeToString(orderPDF),
			"message_id": fmt.Sprintf("ct-json-%d", i), "subject": "s", "template": "contoso-po"})
		req.Header.Set("Content-Type", ct)
		res := b.do(t, req)
		require.Equal(t, http.StatusAccepted, res.status, "%q: %s", ct, res.raw)
	}
}

// Tokens in the query string never authenticate, not even as a second
// opinion next to another client's header token.
func TestQueryTokenIgnoredNextToHeader(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.do(t, b.multipart(t, "tok-acme", form{fields: fields("message_id", "q", "subject", "s", "template", "contoso-po"), file: orderPDF}))
	require.Equal(t, http.StatusAccepted, res.status)
	logID := res.body["log_id"].(string)
	req, err := http.NewRequest(http.MethodGet, b.url+"/documents/"+logID+"?access_token=tok-acme&token=tok-acme", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok-globex")
	require.Equal(t, http.StatusNotFound, b.do(t, req).status)
}

// ClientByToken must compare in constant time: the token is looked up by
// its SHA-256 (an attacker cannot steer a prefix match of a hash) and the
// stored hash is compared with subtle.ConstantTimeCompare. The review of
// that function is pinned here: it must call ConstantTimeCompare and no
// variable-time comparison; near-miss tokens are refused.
func TestTokenCompareConstantTime(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filepath.Join(root, "pkg", "store", "clients.go"), nil, 0)
	require.NoError(t, err)
	var found, constantTime bool
	var variable []string
	ast.Inspect(file, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "ClientByToken" {
			return true
		}
		found = true
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				switch x.Sel.Name {
				case "ConstantTimeCompare":
					constantTime = true
				case "Equal", "Compare", "EqualFold":
					variable = append(variable, fset.Position(x.Pos()).String())
				}
			case *ast.BinaryExpr:
				if x.Op == token.EQL || x.Op == token.NEQ {
					if id, ok := x.X.(*ast.Ident); ok && (id.Name == "token" || id.Name == "stored" || id.Name == "h") {
						variable = append(variable, fset.Position(x.Pos()).String())
					}
				}
			}
			return true
		})
		return false
	})
	require.True(t, found, "store.ClientByToken not found")
	require.True(t, constantTime, "ClientByToken must compare with subtle.ConstantTimeCompare")
	require.Empty(t, variable, "variable-time comparison of token material")

	st := storetest.Store(t)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme"}, store.TokenHash("tok-acme-0123456789")))
	_, err = st.ClientByToken(t.Context(), "tok-acme-0123456789")
	require.NoError(t, err)
	for _, near := range []string{"tok-acme-012345678", "tok-acme-01234567890", "Tok-acme-0123456789", "tok-acme-0123456788", "",
		"tok-acme-0123456789\x00", " tok-acme-0123456789"} {
		_, err := st.ClientByToken(t.Context(), near)
		require.Equal(t, document.EUNAUTHENTICATED, document.ErrorKind(err), "%q", near)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		require.NotEqual(t, dir, filepath.Dir(dir), "go.work not found")
	}
}

// Log ids PostgreSQL cannot hold in a text column (a NUL byte, invalid
// UTF-8) name no document: 404 document_not_found, as for any unknown id,
// never the 500 of the database's refusal. The ops console's lookup is the
// same store call without the client scope.
func TestDocumentUnstorableLogID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, raw := range []string{"%00", "%FF", "a%00b", "%C3%28", "%ED%A0%80"} {
		res := b.get(t, "tok-acme", raw)
		require.Equal(t, http.StatusNotFound, res.status, "%s: %s", raw, res.raw)
		require.Equal(t, "document_not_found", res.body["code"], raw)
	}
	_, err := b.st.DocumentByLogIDAnyClient(t.Context(), "\x00")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
}

// A stranger who sends headers and then dribbles a small body gets its 401
// at once and the connection is closed, without the server waiting for the
// body (net/http reads an unread body before answering unless the answer
// closes the connection; the body here never completes).
func TestUnauthenticatedSlowBody(t *testing.T) {
	t.Parallel()
	url, _ := runServer(t, ingest.Config{})
	for _, auth := range []string{"", "Authorization: Bearer wrong-token\r\n"} {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = io.WriteString(c, "POST /incoming HTTP/1.1\r\nHost: x\r\n"+auth+
			"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000\r\n\r\n--b\r\n")
		require.NoError(t, err)
		// Only keeps a broken server from hanging the test: the answer must
		// come without the remaining 994 bytes, which never come.
		require.NoError(t, c.SetReadDeadline(time.Now().Add(60*time.Second)))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "no answer before the body was complete (auth %q)", auth)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		require.True(t, res.Close, "a refusal before the body is read closes the connection")
		_, err = io.ReadAll(res.Body)
		require.NoError(t, err)
		_, err = c.Read(make([]byte, 1))
		require.ErrorIs(t, err, io.EOF, "server closed the connection")
	}
}
