package standalone_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	disystem "github.com/docintake/docintake/pkg/system"
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
	p, err := disystem.NewTemplatePush("t.yml", []byte(content), nil)
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
