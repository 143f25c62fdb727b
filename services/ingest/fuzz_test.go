package ingest

// Fuzz targets for the upload parsing, run through the real echo handler
// with in-memory fakes of the store and object store (no servers, so they
// fuzz fast): `make fuzz` explores, `go test` replays the seeds and the
// crashers kept in testdata/fuzz.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

type fakeStore struct {
	mu   sync.Mutex
	docs map[string]document.Document // by message_id
}

func (f *fakeStore) ClientByToken(_ context.Context, token string) (document.Client, error) {
	if token != "tok" {
		return document.Client{}, document.Errorf(document.EUNAUTHENTICATED, "invalid access token")
	}
	return document.Client{ID: "acme"}, nil
}

func (f *fakeStore) DocumentByMessageID(_ context.Context, _, messageID string) (document.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.docs[messageID]; ok {
		return d, nil
	}
	return document.Document{}, document.Errorf(document.ENOTFOUND, "no document")
}

func (f *fakeStore) DocumentByLogID(context.Context, string, string) (document.Document, error) {
	return document.Document{}, document.Errorf(document.ENOTFOUND, "no document")
}

func (f *fakeStore) CreateDocument(_ context.Context, d document.Document, _ store.OutboxRow) (document.Document, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.docs[d.MessageID]; ok {
		return old, false, nil
	}
	d.State = document.StateReceived
	f.docs[d.MessageID] = d
	return d, true, nil
}

type fakeObjects struct {
	mu   sync.Mutex
	objs map[string][]byte
}

func (f *fakeObjects) Put(_ context.Context, key string, r io.Reader, _ int64, _ string) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.objs[key] = b
	f.mu.Unlock()
	return nil
}

func (f *fakeObjects) Delete(_ context.Context, key string) error {
	f.mu.Lock()
	delete(f.objs, key)
	f.mu.Unlock()
	return nil
}

func (f *fakeObjects) URI(key string) string { return "mem://" + key }

type oneTemplate struct{}

func (oneTemplate) Resolve(_, name, partyID string) (string, bool) {
	return "contoso-po", name == "contoso-po" || partyID == "CONTOSO"
}

type fuzzServer struct {
	h    http.Handler
	st   *fakeStore
	objs *fakeObjects
}

func newFuzzServer() *fuzzServer {
	st := &fakeStore{docs: map[string]document.Document{}}
	objs := &fakeObjects{objs: map[string][]byte{}}
	srv := New(Config{MaxUploadBytes: 1 << 20}, st, objs, oneTemplate{}, zap.NewNop(), prometheus.NewRegistry(),
		observability.NewHealth())
	return &fuzzServer{h: srv.Handler(), st: st, objs: objs}
}

// documented are the statuses the contract allows for an upload.
var documented = map[int]bool{202: true, 400: true, 401: true, 413: true, 415: true, 422: true}

// serve sends one request and checks what holds for every answer: a
// documented status, a JSON body, an error code on errors, and for a 202 a
// stored PDF and clean metadata.
func (f *fuzzServer) serve(t *testing.T, req *http.Request) {
	t.Helper()
	req.Header.Set("Authorization", "Bearer tok")
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if !documented[rec.Code] {
		t.Fatalf("undocumented status %d: %s", rec.Code, rec.Body.Bytes())
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("status %d with a non-JSON body %q", rec.Code, rec.Body.Bytes())
	}
	if rec.Code != http.StatusAccepted {
		if code, _ := body["code"].(string); code == "" {
			t.Fatalf("error without code: %s", rec.Body.Bytes())
		}
		return
	}
	f.st.mu.Lock()
	defer f.st.mu.Unlock()
	for _, d := range f.st.docs {
		for name, v := range map[string]string{"message_id": d.MessageID, "subject": d.Subject, "filename": d.Filename} {
			if !utf8.ValidString(v) {
				t.Fatalf("%s stored as invalid UTF-8: %q", name, v)
			}
			for _, r := range v {
				if unicode.IsControl(r) && !(name == "subject" && r == '\t') {
					t.Fatalf("%s stored with a control character: %q", name, v)
				}
			}
		}
		if strings.ContainsAny(d.Filename, "/\\") || d.Filename == ".." {
			t.Fatalf("filename keeps a path: %q", d.Filename)
		}
		f.objs.mu.Lock()
		obj, ok := f.objs.objs[d.SourceKey]
		f.objs.mu.Unlock()
		if !ok || !bytes.HasPrefix(obj, []byte("%PDF-")) {
			t.Fatalf("202 for %q without a stored PDF", d.MessageID)
		}
	}
}

func FuzzUploadMultipart(f *testing.F) {
	f.Add("m-1", "subject", "contoso-po", "", "", "order.pdf", []byte("%PDF-1.4\n%%EOF"), false)
	f.Add("m\xff", "s\x00", "", "CONTOSO", "no_items", "../../etc/passwd", []byte("%PDF-"), false)
	f.Add("", "", "contoso-po", "CONTOSO", "bogus", "C:\\x\\..\\a.pdf", []byte("PK\x03\x04"), true)
	f.Add("m\r\nX: y", "]]><x>&amp;", "contoso-po", "", "", "a\x1b[31m.pdf", []byte("%PDF-1.7 \xff\xfe"), false)
	f.Fuzz(func(t *testing.T, messageID, subject, tmpl, party, mode, filename string, file []byte, raw bool) {
		srv := newFuzzServer()
		var buf bytes.Buffer
		ctype := "multipart/form-data; boundary=B0UND"
		if raw {
			// The fields as a hand-written (possibly broken) body.
			buf.WriteString("--B0UND\r\nContent-Disposition: form-data; name=\"" + messageID + "\"\r\n\r\n" + subject +
				"\r\n--B0UND\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename + "\"\r\n\r\n")
			buf.Write(file)
			buf.WriteString("\r\n--B0UND--" + tmpl)
		} else {
			w := multipart.NewWriter(&buf)
			for _, kv := range [][2]string{{"message_id", messageID}, {"subject", subject}, {"template", tmpl}, {"party_id", party}, {"result_mode", mode}} {
				if kv[1] != "" {
					_ = w.WriteField(kv[0], kv[1])
				}
			}
			fw, _ := w.CreateFormFile("file", filename)
			_, _ = fw.Write(file)
			_ = w.Close()
			ctype = w.FormDataContentType()
		}
		req := httptest.NewRequest(http.MethodPost, "/incoming", &buf)
		req.Header.Set("Content-Type", ctype)
		srv.serve(t, req)
	})
}

func FuzzUploadJSON(f *testing.F) {
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4\n%%EOF"))
	f.Add(`{"file_base64":"` + pdf + `","message_id":"m","template":"contoso-po","subject":"s","filename":"a.pdf"}`)
	f.Add(`{"file_base64":"` + pdf + `","message_id":"m\ud800","template":"contoso-po","subject":"s\u0000"}`)
	f.Add(`{"file_base64":"JVBERi0=","message_id":"m` + "\xff" + `","template":"contoso-po","subject":"s"}`)
	f.Add(`{"file_base64":["x"],"message_id":{"a":[[[[1]]]]}}`)
	f.Add(`{"file_base64":"JVBE\nRi0\r\n=","message_id":"m","template":"contoso-po","subject":"s","result_mode":"no_items"}`)
	f.Add(`{"file_base64":"JVBERi0x","message_id":"m","template":"contoso-po","subject":"s"}{}`)
	f.Fuzz(func(t *testing.T, body string) {
		srv := newFuzzServer()
		req := httptest.NewRequest(http.MethodPost, "/incoming-json", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		srv.serve(t, req)
	})
}

// FuzzDecodeBase64 checks the lenient decoder against the standard library:
// whatever RFC 4648 base64 (standard or URL alphabet, padded or not, MIME
// line breaks) encodes must come back byte for byte, and nothing panics.
func FuzzDecodeBase64(f *testing.F) {
	f.Add([]byte("%PDF-1.4"), "")
	f.Add([]byte{0xfb, 0xff, 0xfe}, "!!")
	f.Add([]byte{}, "====")
	f.Fuzz(func(t *testing.T, data []byte, junk string) {
		for name, enc := range map[string]string{
			"std":  base64.StdEncoding.EncodeToString(data),
			"raw":  base64.RawStdEncoding.EncodeToString(data),
			"url":  base64.URLEncoding.EncodeToString(data),
			"mime": wrapLines(base64.StdEncoding.EncodeToString(data), 76),
		} {
			var out bytes.Buffer
			if err := decodeBase64(&out, enc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("%s: decoded %x, want %x", name, out.Bytes(), data)
			}
		}
		// Arbitrary input: an error or some bytes, never a panic; when the
		// standard decoder accepts it, both agree.
		var out bytes.Buffer
		err := decodeBase64(&out, junk)
		if want, serr := base64.StdEncoding.DecodeString(junk); serr == nil {
			if err != nil || !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("%q: got %x, %v; want %x", junk, out.Bytes(), err, want)
			}
		}
	})
}

func wrapLines(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\r\n")
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// TestUTF8Reader feeds valid and invalid UTF-8 one byte at a time, so that
// every rune is split across reads.
func TestUTF8Reader(t *testing.T) {
	for in, ok := range map[string]bool{
		"plain": true, "äöü €𝄞": true, "": true,
		"a\xff": false, "\xc3": false, "ok\xe2\x82": false, "\xed\xa0\x80": false, // truncated, surrogate
	} {
		r := &utf8Reader{r: &oneByte{s: in}}
		got, err := io.ReadAll(r)
		if ok && (err != nil || string(got) != in) {
			t.Errorf("%q: got %q, %v", in, got, err)
		}
		if !ok && err != errInvalidUTF8 {
			t.Errorf("%q: want errInvalidUTF8, got %v", in, err)
		}
	}
}

type oneByte struct{ s string }

func (o *oneByte) Read(p []byte) (int, error) {
	if o.s == "" {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = o.s[0]
	o.s = o.s[1:]
	return 1, nil
}
