package standalone_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// tryUpload posts pdf with fields and returns the status and body.
func tryUpload(t *testing.T, url, token string, fields map[string]string, pdf []byte) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(t, w.WriteField(k, v))
	}
	fw, err := w.CreateFormFile("file", "order.pdf")
	require.NoError(t, err)
	_, _ = fw.Write(pdf)
	require.NoError(t, w.Close())
	req, err := http.NewRequest(http.MethodPost, url+"/incoming", &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return res.StatusCode, out
}

// pushText stores content as a new version of its template in scope client.
func pushText(t *testing.T, st *store.Store, client, content string) int {
	t.Helper()
	p, err := catalogue.NewTemplatePush("t.yml", []byte(content), nil)
	require.NoError(t, err)
	p.ClientID, p.PushedBy = client, "test"
	r, err := st.PushTemplate(t.Context(), p)
	require.NoError(t, err)
	require.True(t, r.Changed)
	return r.Version
}

// resultJSON reads a processed document's result JSON (file:// URI).
func resultJSON(t *testing.T, d map[string]any) map[string]any {
	t.Helper()
	u, err := neturl.Parse(d["result_json_path"].(string))
	require.NoError(t, err)
	raw, err := os.ReadFile(u.Path)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

// The template lifecycle in a running standalone: a pushed template is
// accepted within 2 s, v2 changes the result, a rollback restores it, a
// disabled template is refused, and client scope isolates tenants.
func TestStandaloneTemplateLifecycle(t *testing.T) {
	t.Parallel()
	dbURL := storetest.SchemaURL(t)
	tmpl := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(tmpl, "gen-order.yml"), []byte(genTemplate), 0o644))
	s := start(t, map[string]string{"INTAKE_DATABASE_URL": dbURL, "INTAKE_TEMPLATES_DIR": tmpl, "INTAKE_PDF_ENGINE": "pdftotext"})
	pool, err := pgxpool.New(t.Context(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "other", Name: "Other", WebhookURL: "http://127.0.0.1:1/hook"},
		store.TokenHash("other-token")))
	// One PO is read again with each template version: not a duplicate here.
	require.NoError(t, st.SetDuplicateWindow(t.Context(), "dev", 0))

	pdf := pdftexttest.PDF([]string{"GENERATED ORDER", "Order no. G-4711", "Date: 2026-02-03", "Items",
		"BOLT-1      Bolts M8      10      1.50", "Total 15.00"})
	n := 0
	send := func(token, tmplName string) (int, map[string]any) {
		n++
		return tryUpload(t, s.url, token, map[string]string{"message_id": fmt.Sprintf("m-%d", n), "subject": "PO",
			"template": tmplName}, pdf)
	}
	// process uploads with the dev client and returns the result JSON.
	process := func(tmplName string) map[string]any {
		code, ack := send(devToken, tmplName)
		require.Equal(t, http.StatusAccepted, code, ack)
		d := waitDetails(t, s.url, ack["log_id"].(string), "processed_success", "sent_success", "finished_success",
			"finished_with_failure") // the dev webhook does not listen here
		return resultJSON(t, d)
	}
	// live waits (at most 2 s) until an upload naming tmplName gets want.
	live := func(token, tmplName string, want int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for {
			code, body := send(token, tmplName)
			if code == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("upload with %s: %d %v, want %d within 2 s", tmplName, code, body, want)
			}
		}
	}

	// INTAKE_TEMPLATES_DIR was synced as v1.
	res := process("gen-order")
	require.Equal(t, "G-4711", res["order"].(map[string]any)["order_id"])
	require.EqualValues(t, 1, res["template_version"])

	// A new template name is accepted within 2 s of the push.
	code, body := send(devToken, "brand-new")
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "template_not_found", body["code"])
	pushText(t, st, "", strings.Replace(genTemplate, "name: gen-order\n  party_ids: [GEN]", "name: brand-new", 1))
	live(devToken, "brand-new", http.StatusAccepted)

	// v2 changes the result (the order id gains a prefix) ...
	require.Equal(t, 2, pushText(t, st, "", strings.Replace(genTemplate, `order_id: {parser: regex, regex: 'Order no\. (\S+)'}`,
		`order_id: {parser: regex, regex: 'Order no\. G-(\S+)'}`, 1)))
	deadline := time.Now().Add(2 * time.Second)
	for {
		res = process("gen-order")
		if res["template_version"] == float64(2) || time.Now().After(deadline) {
			break
		}
	}
	require.EqualValues(t, 2, res["template_version"])
	require.Equal(t, "4711", res["order"].(map[string]any)["order_id"])

	// ... and a rollback to v1 restores it as v3.
	rb, err := st.RollbackTemplate(t.Context(), "", "gen-order", 1, "", "test")
	require.NoError(t, err)
	require.Equal(t, 3, rb.Version)
	deadline = time.Now().Add(2 * time.Second)
	for {
		res = process("gen-order")
		if res["template_version"] == float64(3) || time.Now().After(deadline) {
			break
		}
	}
	require.EqualValues(t, 3, res["template_version"])
	require.Equal(t, "G-4711", res["order"].(map[string]any)["order_id"])

	// Disabled: refused like an unknown name; enabled again: accepted.
	require.NoError(t, st.SetTemplateEnabled(t.Context(), "", "brand-new", false))
	live(devToken, "brand-new", http.StatusBadRequest)
	require.NoError(t, st.SetTemplateEnabled(t.Context(), "", "brand-new", true))
	live(devToken, "brand-new", http.StatusAccepted)

	// Client scope: "other"'s own template is invisible to dev, exactly like
	// an unknown name, and serves "other".
	pushText(t, st, "other", strings.Replace(genTemplate, "name: gen-order\n  party_ids: [GEN]", "name: private-order", 1))
	live("other-token", "private-order", http.StatusAccepted)
	code, body = send(devToken, "private-order")
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "template_not_found", body["code"])
	require.Equal(t, `template "private-order" is not configured`, body["message"])
}

// hook records the webhook calls a client receives.
type hook struct {
	mu    sync.Mutex
	calls []hookCall
}

type hookCall struct {
	id     string
	logID  string
	status string
	tmpl   string
}

func (h *hook) handler(w http.ResponseWriter, r *http.Request) {
	var body struct {
		LogID    string `json:"log_id"`
		Status   string `json:"status"`
		Template string `json:"template"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	h.mu.Lock()
	h.calls = append(h.calls, hookCall{r.Header.Get("webhook-id"), body.LogID, body.Status, body.Template})
	h.mu.Unlock()
}

// wait returns the calls for logID once one has status.
func (h *hook) wait(t *testing.T, logID, status string) []hookCall {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		h.mu.Lock()
		var got []hookCall
		found := false
		for _, c := range h.calls {
			if c.logID == logID {
				got = append(got, c)
				found = found || c.status == status
			}
		}
		h.mu.Unlock()
		if found {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s webhook for %s; got %+v", status, logID, got)
		}
		time.Sleep(20 * time.Millisecond) // polling the receiver the system under test calls
	}
}

// A document rejected by a broken template is reprocessed after the fix:
// a new attempt with the current version, the success delivered under a new
// webhook-id, the earlier attempt kept.
func TestStandaloneReprocessAfterFix(t *testing.T) {
	t.Parallel()
	dbURL := storetest.SchemaURL(t)
	h := &hook{}
	srv := httptest.NewServer(http.HandlerFunc(h.handler))
	t.Cleanup(srv.Close)
	s := start(t, map[string]string{"INTAKE_DATABASE_URL": dbURL, "INTAKE_TEMPLATES_DIR": t.TempDir(),
		"INTAKE_PDF_ENGINE": "pdftotext", "INTAKE_WEBHOOK_ALLOW_PRIVATE": "true"})
	pool, err := pgxpool.New(t.Context(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "erp", Name: "ERP", WebhookURL: srv.URL + "/hook",
		WebhookEnabled: true}, store.TokenHash("erp-token")))

	// v1 is broken: its keyword is not on the page, so orders are rejected.
	broken := strings.Replace(genTemplate, "keywords: [GENERATED ORDER]", "keywords: [GENERATED 0RDER]", 1)
	pushText(t, st, "", broken)
	pdf := pdftexttest.PDF([]string{"GENERATED ORDER", "Order no. G-7", "Date: 2026-02-03", "Items",
		"BOLT-1      Bolts M8      10      1.50", "Total 15.00"})
	var code int
	var ack map[string]any
	deadline := time.Now().Add(2 * time.Second)
	for {
		code, ack = tryUpload(t, s.url, "erp-token", map[string]string{"message_id": "r-1", "subject": "PO", "template": "gen-order"}, pdf)
		if code == http.StatusAccepted || time.Now().After(deadline) {
			break
		}
	}
	require.Equal(t, http.StatusAccepted, code, ack)
	logID := ack["log_id"].(string)
	first := h.wait(t, logID, "rejected")
	require.Equal(t, "gen-order", first[0].tmpl, "the webhook's template stays the name")

	// The fix goes live (a probe template pushed after it shows the shared
	// catalogue has reloaded past it), then the document is reprocessed.
	require.Equal(t, 2, pushText(t, st, "", genTemplate))
	pushText(t, st, "", strings.Replace(genTemplate, "name: gen-order\n  party_ids: [GEN]", "name: probe", 1))
	deadline = time.Now().Add(2 * time.Second)
	for n := 0; ; n++ {
		code, _ = tryUpload(t, s.url, "erp-token", map[string]string{"message_id": fmt.Sprintf("probe-%d", n), "subject": "PO", "template": "probe"}, pdf)
		if code == http.StatusAccepted {
			break
		}
		require.True(t, time.Now().Before(deadline), "probe template not live within 2 s")
	}
	waitDetailsAs(t, s.url, "erp-token", logID, "finished_rejected")
	doc, err := st.DocumentByLogIDAnyClient(t.Context(), logID)
	require.NoError(t, err)
	_, err = lifecycle.Reprocess(t.Context(), st, "intake", doc, "operator:test")
	require.NoError(t, err)

	calls := h.wait(t, logID, "success")
	require.Len(t, calls, 2)
	require.NotEqual(t, calls[0].id, calls[1].id, "the new outcome has a new webhook-id")
	d := waitDetailsAs(t, s.url, "erp-token", logID, "finished_success")
	require.Equal(t, "finished_success", d["document_state"])

	atts, err := st.Attempts(t.Context(), doc.ID)
	require.NoError(t, err)
	require.Len(t, atts, 2, "the earlier attempt is kept")
	require.Equal(t, []int{1, 2}, []int{atts[0].Version, atts[1].Version})
	ev, err := st.Events(t.Context(), doc.ID)
	require.NoError(t, err)
	var states []document.State
	for _, e := range ev {
		if e.From != e.To {
			states = append(states, e.To)
		}
	}
	require.Equal(t, []document.State{"received", "processed_rejected", "sent_rejected", "finished_rejected", "received",
		"processed_success", "sent_success", "finished_success"}, states)
}

// waitDetailsAs is waitDetails with another client's token.
func waitDetailsAs(t *testing.T, url, token, logID string, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, url+"/documents/"+logID, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var d map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&d))
		res.Body.Close()
		if d["document_state"] == want {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s is %v, want %s", logID, d["document_state"], want)
		}
		time.Sleep(50 * time.Millisecond) // polling the system under test through its API
	}
}
