package ingest_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/services/ingest"
	"github.com/stretchr/testify/require"
)

// A client template whose lines regex backtracks catastrophically (issue
// 25 finding 1) is refused by its own sample: the sample's run stops at
// INTAKE_TEMPLATE_BUDGET and the 422 says which template ran out of time.
// Before, the sample ran 30 lines × 2 s (64 s) and failed on a match
// timeout, after the client had long given up.
func TestTemplateSampleStopsAtBudget(t *testing.T) {
	t.Parallel()
	b := templatesAPIServer(t, ingest.Config{MaxUploadBytes: 1 << 20, TemplateBudget: 300 * time.Millisecond}, nil, nil)
	tmpl := strings.Replace(apiTemplate, "docintake:", `  lines:
    parser: lines
    start: Items
    end: End of items
    line: '(?=(a+)+b)(?P<description>a+)'
docintake:`, 1)
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for name, content := range map[string]string{
		"acme-po.yml": tmpl,
		"order.txt":   "ACME ORDER\nPO 200\nItems\n" + strings.Repeat(strings.Repeat("a", 40)+"!\n", 30) + "End of items\n",
		"order.json":  `[{"issuer": "Acme", "order_id": "200", "currency": "EUR", "desc": "Invoice from Acme"}]`,
	} {
		field := "samples"
		if strings.HasSuffix(name, ".yml") {
			field = "template"
		}
		fw, err := w.CreateFormFile(field, name)
		require.NoError(t, err)
		_, _ = fw.Write([]byte(content))
	}
	require.NoError(t, w.Close())
	r := b.do(t, b.req(t, http.MethodPut, "/templates/acme-po", "tok-acme", w.FormDataContentType(), buf.Bytes()))
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.raw))
	require.Equal(t, "samples_failed", r.body["code"])
	problem := r.body["details"].(map[string]any)["order.txt"].(string)
	require.Contains(t, problem, "template acme-po: time limit exceeded")
	require.Contains(t, problem, "budget of 300ms per document")
	require.Contains(t, problem, "in field lines")
}
