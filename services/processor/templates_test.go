package processor_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/processor"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// acmeBuyer returns the test template with its static buyer name set to
// name: a version whose effect is visible in the result JSON.
func acmeBuyer(t testing.TB, name string) []byte {
	y := string(mustRead(t, filepath.Join("testdata", "templates", "acme.yml")))
	out := strings.Replace(y, "buyer_name: {parser: static, value: ACME Corp}", "buyer_name: {parser: static, value: "+name+"}", 1)
	require.NotEqual(t, y, out)
	return []byte(out)
}

// pushAcme stores content as the next global version of acme.
func (b *bundle) pushAcme(content []byte) int {
	b.t.Helper()
	p, err := catalogue.NewTemplatePush("acme.yml", content, nil)
	require.NoError(b.t, err)
	p.PushedBy = "test"
	r, err := b.st.PushTemplate(b.t.Context(), p)
	require.NoError(b.t, err)
	return r.Version
}

type versionedResult struct {
	Version int    `json:"template_version"`
	SHA256  string `json:"template_sha256"`
	Order   struct {
		Parties []struct {
			Role    string `json:"role"`
			Address struct {
				Name string `json:"name"`
			} `json:"address"`
		} `json:"parties"`
	} `json:"order"`
}

func (r versionedResult) buyer() string {
	for _, p := range r.Order.Parties {
		if p.Role == "buyer" {
			return p.Address.Name
		}
	}
	return ""
}

// liveWithin2s reports whether processed document d used version want of
// the template, whose result says so too, and fails the test when d used an
// older version although its attempt started more than 2 s after want was
// pushed (both times are the database's clock): a push must be live within
// 2 s, however long the documents then take.
func (b *bundle) liveWithin2s(d document.Document, client, name string, want int) bool {
	b.t.Helper()
	v, err := b.st.TemplateVersion(b.t.Context(), client, name, want)
	require.NoError(b.t, err)
	atts, err := b.st.Attempts(b.t.Context(), d.ID)
	require.NoError(b.t, err)
	require.Len(b.t, atts, 1)
	require.Equal(b.t, atts[0].Version, b.result(d).Version)
	if atts[0].Version == want {
		return true
	}
	require.Less(b.t, atts[0].StartedAt.Sub(v.PushedAt), 2*time.Second, "v%d still used %s after v%d was pushed",
		atts[0].Version, atts[0].StartedAt.Sub(v.PushedAt), want)
	return false
}

func (b *bundle) result(d document.Document) versionedResult {
	b.t.Helper()
	var r versionedResult
	require.NoError(b.t, json.Unmarshal(b.read(d.ResultJSONPath), &r))
	return r
}

// A version pushed while a separate processor process runs is used within
// 2 s, without a restart, and changes the result.
func TestTemplatePushLiveInProcessorProcess(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.startChild(t, nil)
	d := b.waitState(b.upload(orderPDF("L-1", nil), docOpts{}), document.StateProcessedSuccess, 60*time.Second)
	require.Equal(t, 1, b.result(d).Version)
	require.Equal(t, "ACME Corp", b.result(d).buyer())

	v := b.pushAcme(acmeBuyer(t, "ACME Corp Two"))
	require.Equal(t, 2, v)
	for i := 0; ; i++ {
		d = b.waitState(b.upload(orderPDF(fmt.Sprintf("L-%d", i+2), nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
		if b.liveWithin2s(d, "", "acme", 2) {
			break
		}
	}
	require.Equal(t, "ACME Corp Two", b.result(d).buyer())
}

// Two processors (each with its own catalogue, as separate replicas) work
// through documents while new versions are pushed: every document is
// processed with exactly one version, the one its attempt pinned, and the
// result says which.
func TestTwoProcessorsNeverMixVersions(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()
	b.start(func(d *processor.Deps) {
		tm, err := catalogue.Open(t.Context(), b.st, zaptest.NewLogger(t), catalogue.Options{})
		require.NoError(t, err)
		t.Cleanup(tm.Close)
		d.Templates = tm
	})

	// A document whose attempt pinned v1 before v2 was pushed is finished
	// with v1.
	pinned := b.create(orderPDF("P-1", nil), docOpts{})
	pinned.State = document.StateReceived
	v, _, err := b.tmpls.PinAttempt(t.Context(), pinned, 1, "test")
	require.NoError(t, err)
	require.Equal(t, 1, v.Number)
	b.pushAcme(acmeBuyer(t, "Buyer 2"))

	// Meanwhile versions keep changing under a stream of documents.
	var docs []document.Document
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 6 {
			b.pushAcme(acmeBuyer(t, fmt.Sprintf("Buyer %d", i+3)))
			time.Sleep(20 * time.Millisecond) // spread the pushes over the uploads
		}
	})
	for i := range 24 {
		d := b.upload(orderPDF(fmt.Sprintf("M-%d", i), nil), docOpts{})
		mu.Lock()
		docs = append(docs, d)
		mu.Unlock()
	}
	wg.Wait()
	b.flush()

	r := b.result(b.waitState(pinned, document.StateProcessedSuccess, 30*time.Second))
	require.Equal(t, 1, r.Version)
	require.Equal(t, "ACME Corp", r.buyer())

	for _, d := range docs {
		d = b.waitState(d, document.StateProcessedSuccess, 30*time.Second)
		atts, err := b.st.Attempts(t.Context(), d.ID)
		require.NoError(t, err)
		require.Len(t, atts, 1, "one attempt, one pin")
		r := b.result(d)
		require.Equal(t, atts[0].Version, r.Version)
		require.Equal(t, hex.EncodeToString(atts[0].SHA256), r.SHA256)
		// The buyer name the result carries is the one of that version.
		want := "ACME Corp"
		if r.Version >= 2 {
			want = fmt.Sprintf("Buyer %d", r.Version)
		}
		require.Equal(t, want, r.buyer(), "version %d", r.Version)
	}
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// uploadTo posts an order to a running ingest and returns the status and
// the log id.
func uploadTo(t *testing.T, url, token, tmpl, messageID string, pdf []byte) (int, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range map[string]string{"message_id": messageID, "subject": "PO", "template": tmpl} {
		require.NoError(t, w.WriteField(k, v))
	}
	fw, err := w.CreateFormFile("file", "po.pdf")
	require.NoError(t, err)
	_, _ = fw.Write(pdf)
	require.NoError(t, w.Close())
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/incoming", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var body struct {
		LogID string `json:"log_id"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body.LogID
}

// Separate ingest and processor processes, each with its own catalogue:
// a new template is accepted by ingest within 2 s of the push, and a new
// version of it is used by the processor within 2 s.
func TestTemplatePushLiveInSeparateIngestAndProcessor(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs ingest and processor processes")
	}
	b := setup(t, nil)
	b.addArticles()
	require.NoError(t, b.st.UpsertClient(t.Context(), document.Client{ID: clientID, Name: "ACME",
		WebhookURL: "http://127.0.0.1:1/hook", WebhookEnabled: true}, store.TokenHash("tok-acme")))
	addr := freeAddr(t)
	b.startBinary(t, buildBinary(t, "../ingest/cmd/ingest"), map[string]string{"INTAKE_HTTP_ADDR": addr})
	b.startChild(t, nil)
	api := "http://" + addr
	waitFor(t, 60*time.Second, func() error {
		res, err := http.Get(api + "/readyz")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", res.StatusCode)
		}
		return nil
	})

	n := 0
	upload := func() (int, string) {
		n++
		return uploadTo(t, api, "tok-acme", "acme-new", fmt.Sprintf("sep-%d", n), orderPDF(fmt.Sprintf("S-%d", n), nil))
	}
	code, _ := upload()
	require.Equal(t, http.StatusBadRequest, code, "unknown before the push")

	renamed := strings.Replace(string(acmeBuyer(t, "New One")), "name: acme\n  party_ids: [ACME]", "name: acme-new", 1)
	p, err := catalogue.NewTemplatePush("acme-new.yml", []byte(renamed), nil)
	require.NoError(t, err)
	p.PushedBy = "test"
	_, err = b.st.PushTemplate(t.Context(), p)
	require.NoError(t, err)
	pushed := time.Now()
	var logID string
	for code != http.StatusAccepted {
		require.Less(t, time.Since(pushed), 2*time.Second, "ingest did not accept the new template within 2 s")
		code, logID = upload()
	}
	d, err := b.st.DocumentByLogIDAnyClient(t.Context(), logID)
	require.NoError(t, err)
	d = b.waitState(d, document.StateProcessedSuccess, 30*time.Second)
	require.Equal(t, "New One", b.result(d).buyer())

	p.Content = []byte(strings.Replace(renamed, "New One", "New Two", 1))
	_, err = b.st.PushTemplate(t.Context(), p)
	require.NoError(t, err)
	for {
		code, logID = upload()
		require.Equal(t, http.StatusAccepted, code)
		d, err := b.st.DocumentByLogIDAnyClient(t.Context(), logID)
		require.NoError(t, err)
		d = b.waitState(d, document.StateProcessedSuccess, 30*time.Second)
		if b.liveWithin2s(d, "", "acme-new", 2) {
			require.Equal(t, "New Two", b.result(d).buyer())
			break
		}
	}
}
