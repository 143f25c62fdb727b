package standalone_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// webhookBody is what a client's webhook receives (the interface's Events
// part).
type webhookBody struct {
	Template     string  `json:"template"`
	MessageID    string  `json:"message_id"`
	LogID        string  `json:"log_id"`
	Result       *string `json:"result"`
	Status       string  `json:"status"`
	StatusReason *string `json:"status_reason"`
}

// bodies records every webhook body and wakes waiters on each one, so the
// test waits for the system's call instead of sleeping.
type bodies struct {
	mu      sync.Mutex
	calls   []webhookBody
	arrived chan struct{} // closed and replaced on every call
}

func newBodies() *bodies { return &bodies{arrived: make(chan struct{})} }

func (b *bodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body webhookBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	b.calls = append(b.calls, body)
	close(b.arrived)
	b.arrived = make(chan struct{})
	b.mu.Unlock()
}

// outcome returns the first webhook body for logID, failing after 90 s.
func (b *bodies) outcome(t *testing.T, logID string) webhookBody {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		b.mu.Lock()
		for _, c := range b.calls {
			if c.LogID == logID {
				b.mu.Unlock()
				return c
			}
		}
		arrived := b.arrived
		b.mu.Unlock()
		select {
		case <-arrived:
		case <-deadline:
			t.Fatalf("no webhook for %s within 90s", logID)
		}
	}
}

// tryUploadJSON posts pdf to /incoming-json and returns status and body.
func tryUploadJSON(t *testing.T, url, token string, fields map[string]string, pdf []byte) (int, map[string]any) {
	t.Helper()
	in := map[string]any{"file_base64": base64.StdEncoding.EncodeToString(pdf), "filename": "doc.pdf"}
	for k, v := range fields {
		in[k] = v
	}
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url+"/incoming-json", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var out map[string]any
	require.NoError(t, json.Unmarshal(body, &out), string(body))
	return res.StatusCode, out
}

// The built-in template generic through the whole system (PostgreSQL,
// JetStream, S3, webhook): any client may name it, a purchase order is
// delivered as a success whose openTRANS carries what the PDF prints,
// invoices are rejected not_an_order, and a client with unknown_party:
// generic has a party_id without a template read by it while another
// client still gets 400.
func TestGenericReaderEndToEnd(t *testing.T) {
	t.Parallel()
	po := mustReadFile(t, repotest.Shared(t, "corpus", "orders", "contoso-po-Adatum-Adel.pdf"))
	// A Factur-X invoice (its attachment decides) and a text-only one (the
	// reader decides).
	xInvoice := mustReadFile(t, repotest.Shared(t, "corpus", "other", "mustang-invoice-103767.pdf"))
	textInvoice := mustReadFile(t, repotest.Shared(t, "corpus", "invoice2data", "tests", "compare", "AmazonWebServices.pdf"))
	dbURL := storetest.SchemaURL(t)
	s3 := objectstoretest.S3Config(t)
	hooks := newBodies()
	srv := httptest.NewServer(hooks)
	t.Cleanup(srv.Close)
	// No templates at all: nothing but the built-in reader can read these.
	s := start(t, map[string]string{"INTAKE_DATABASE_URL": dbURL, "INTAKE_TEMPLATES_DIR": t.TempDir(),
		"INTAKE_PDF_ENGINE": "pdftotext", "INTAKE_WEBHOOK_ALLOW_PRIVATE": "true",
		"INTAKE_S3_ENDPOINT": s3.Endpoint, "INTAKE_S3_BUCKET": s3.Bucket, "INTAKE_S3_ACCESS_KEY": s3.AccessKey,
		"INTAKE_S3_SECRET_KEY": s3.SecretKey})
	pool, err := pgxpool.New(t.Context(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := store.New(pool)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "erp", Name: "ERP", WebhookURL: srv.URL + "/hook",
		WebhookEnabled: true}, store.TokenHash("erp-token")))
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "newbuyers", Name: "New buyers", WebhookURL: srv.URL + "/hook",
		WebhookEnabled: true, UnknownParty: document.UnknownPartyGeneric}, store.TokenHash("nb-token")))

	t.Run("template generic delivers the order the PDF prints", func(t *testing.T) {
		code, ack := tryUpload(t, s.url, "erp-token", map[string]string{"message_id": "g-po", "subject": "PO 190122",
			"template": "generic"}, po)
		require.Equal(t, http.StatusAccepted, code, ack)
		got := hooks.outcome(t, ack["log_id"].(string))
		require.Equal(t, "generic", got.Template)
		require.Equal(t, "success", got.Status, "reason %v", got.StatusReason)
		requireContosoOrder(t, got)

		doc, err := st.DocumentByLogIDAnyClient(t.Context(), ack["log_id"].(string))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(doc.ResultPath, "s3://"+s3.Bucket+"/results/"), doc.ResultPath)
		atts, err := st.Attempts(t.Context(), doc.ID)
		require.NoError(t, err)
		require.Len(t, atts, 1)
		// The built-in template is pinned without a version.
		require.Equal(t, "generic", atts[0].Name)
		require.Zero(t, atts[0].TemplateID)
		require.Zero(t, atts[0].Version)
		require.Empty(t, atts[0].SHA256)
	})

	t.Run("invoices are rejected not_an_order", func(t *testing.T) {
		for _, c := range []struct {
			name string
			pdf  []byte
		}{{"factur-x", xInvoice}, {"text", textInvoice}} {
			code, ack := tryUploadJSON(t, s.url, "erp-token", map[string]string{"message_id": "g-inv-" + c.name,
				"subject": "Invoice", "template": "generic"}, c.pdf)
			require.Equal(t, http.StatusAccepted, code, ack)
			got := hooks.outcome(t, ack["log_id"].(string))
			require.Equal(t, "generic", got.Template, c.name)
			require.NotEqual(t, "success", got.Status, c.name)
			require.Nil(t, got.Result, c.name)
			require.Equal(t, "rejected", got.Status, c.name)
			require.NotNil(t, got.StatusReason, c.name)
			require.Equal(t, "not_an_order", *got.StatusReason, c.name)
		}
	})

	t.Run("unknown_party generic routes a party_id without a template", func(t *testing.T) {
		fields := map[string]string{"message_id": "g-party", "subject": "PO 190122", "party_id": "ADATUM-NEW"}
		code, body := tryUpload(t, s.url, "erp-token", fields, po)
		require.Equal(t, http.StatusBadRequest, code, "unknown_party defaults to reject")
		require.Equal(t, "template_not_found", body["code"])

		code, ack := tryUpload(t, s.url, "nb-token", fields, po)
		require.Equal(t, http.StatusAccepted, code, ack)
		got := hooks.outcome(t, ack["log_id"].(string))
		require.Equal(t, "generic", got.Template)
		require.Equal(t, "success", got.Status, "reason %v", got.StatusReason)
		requireContosoOrder(t, got)
	})
}

// requireContosoOrder checks a success webhook against what
// contoso-po-Adatum-Adel.pdf prints: PO # 190122, DATE 7/27/2019, and two
// lines, 89 × 62.00 = 5,518.00 and 11 × 22.00 = 242.00.
func requireContosoOrder(t *testing.T, got webhookBody) {
	t.Helper()
	require.NotNil(t, got.Result)
	o, err := opentrans.Read(strings.NewReader(*got.Result))
	require.NoError(t, err)
	require.Equal(t, "190122", o.ID)
	require.Equal(t, "2019-07-27", o.IssueDate.String())
	require.Len(t, o.Items, 2)
	want := [][3]string{{"89", "62.00", "5518.00"}, {"11", "22.00", "242.00"}}
	for i, w := range want {
		it := o.Items[i]
		require.Equal(t, w, [3]string{it.Quantity, it.UnitPrice, it.LineAmount}, "item %d", i+1)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
