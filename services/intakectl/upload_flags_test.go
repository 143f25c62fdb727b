package intakectl_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// intakectl upload --wait lists every flagged document with its flags
// (kind, line, expected and printed value, message) after the summary; a
// flag is no failure. The API is a loopback fake answering as docintake.
func TestUploadWaitReportsFlags(t *testing.T) {
	t.Parallel()
	flags := []map[string]any{
		{"kind": "price", "line": 2, "position": "2", "article": "S-200", "expected": "0.30", "printed": "0.25",
			"message": "line 2 (S-200): price 0.25 EUR per C62 is 16.67 % below the price list's 0.30 (tolerance 5 %; price list for every buyer, line 2)"},
		{"kind": "delivery_date_before_order", "line": 0, "expected": "2026-02-03", "printed": "2026-02-01",
			"message": "the order's requested delivery date 2026-02-01 is before the order date 2026-02-03"},
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/incoming":
			require.NoError(t, r.ParseMultipartForm(1<<20))
			w.WriteHeader(http.StatusAccepted)
			_ = json.NewEncoder(w).Encode(map[string]string{"log_id": "log-" + r.FormValue("subject"), "status": "received"})
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/documents/"):
			doc := map[string]any{"id": "d", "filename": "f.pdf", "message_id": "m", "document_date": "2026-02-03",
				"source_path": nil, "result_json_path": "s3://b/r.json", "result_path": "s3://b/r.xml",
				"document_state": "finished_success"}
			if strings.HasSuffix(r.URL.Path, "flagged.pdf") {
				doc["flags"] = flags
			}
			_ = json.NewEncoder(w).Encode(doc)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(api.Close)
	dir := t.TempDir()
	for _, name := range []string{"flagged.pdf", "clean.pdf"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("%PDF-1.4 "+name), 0o600))
	}
	r := runEnv(t, map[string]string{"DOCINTAKE_URL": api.URL, "DOCINTAKE_TOKEN": "tok"}, "upload", "--template", "acme",
		"--wait", "--concurrency", "1", filepath.Join(dir, "flagged.pdf"), filepath.Join(dir, "clean.pdf"))
	require.Equal(t, 0, r.code, r.stderr+r.stdout)
	_, report, ok := strings.Cut(r.stdout, "\nflagged (1 documents):\n")
	require.True(t, ok, r.stdout)
	require.Equal(t, "log-flagged.pdf "+filepath.Join(dir, "flagged.pdf")+" (success)\n"+
		"  price, line 2: expected 0.30, printed 0.25: "+flags[0]["message"].(string)+"\n"+
		"  delivery_date_before_order, order: expected 2026-02-03, printed 2026-02-01: "+flags[1]["message"].(string)+"\n",
		report)
}
