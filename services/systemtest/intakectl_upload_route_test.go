package systemtest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"github.com/stretchr/testify/require"
)

// startRoutingSystem runs the whole system for one client that routes
// uploads without template or party_id (route_unaddressed), serving the
// synthetic alpine and nordwind buyers' templates.
func startRoutingSystem(t *testing.T, routes bool, hookAddr string) *standalonetest.System {
	t.Helper()
	tmpl := t.TempDir()
	for _, layout := range []string{"alpine", "nordwind"} {
		b, err := os.ReadFile(filepath.Join(repotest.Root(t), "pkg", "template", "testdata", "synthetic", layout+".yml"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(tmpl, layout+".yml"), b, 0o644))
	}
	clients := filepath.Join(t.TempDir(), "clients.yaml")
	require.NoError(t, os.WriteFile(clients, fmt.Appendf(nil, `clients:
  - id: dev
    name: routing test
    token_sha256: ["c91cbbedf8c712e8e2b7517ddeca8fe4fde839ebd8339e0b2001363002b37712"]
    webhook_url: http://%s/hook
    route_unaddressed: %v
`, hookAddr, routes), 0o644))
	return standalonetest.Start(t, map[string]string{
		"INTAKE_CLIENTS_FILE":  clients,
		"INTAKE_TEMPLATES_DIR": tmpl,
		"INTAKE_PDF_ENGINE":    "pdftotext",
	})
}

// syntheticPO returns a corpus PO and its truth's order id.
func syntheticPO(t *testing.T, name string) ([]byte, string) {
	t.Helper()
	dir := repotest.Shared(t, "corpus", "synthetic")
	pdf, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
	require.NoError(t, err)
	var truth struct {
		OrderID string `json:"order_id"`
	}
	require.NoError(t, json.Unmarshal(raw, &truth))
	return pdf, truth.OrderID
}

// A supplier's folder of two buyers' POs, with a zip of two more, is
// uploaded in one go without --template or --party-id: each file is routed
// to its buyer's template by the keywords, read (the order ids printed on
// the PDFs), and --wait names each file's template.
func TestUploadMixedArchiveRouted(t *testing.T) {
	t.Parallel()
	alpine1, alpine1ID := syntheticPO(t, "alpine-1")
	nordwind1, nordwind1ID := syntheticPO(t, "nordwind-1")
	alpine2, alpine2ID := syntheticPO(t, "alpine-2")
	nordwind2, nordwind2ID := syntheticPO(t, "nordwind-2")
	hooks := make(chan delivery, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d delivery
		if json.NewDecoder(r.Body).Decode(&d) == nil {
			hooks <- d
		}
	}))
	t.Cleanup(hook.Close)
	sys := startRoutingSystem(t, true, strings.TrimPrefix(hook.URL, "http://"))
	dir := fixture(t, map[string][]byte{
		"alpine-1.pdf":      alpine1,
		"in/nordwind-1.pdf": nordwind1,
		"archive.zip":       mailboxtest.Zip(t, map[string][]byte{"q3/alpine-2.pdf": alpine2, "nordwind-2.PDF": nordwind2, "readme.txt": []byte("x")}),
	})
	env := map[string]string{"DOCINTAKE_URL": sys.URL, "DOCINTAKE_TOKEN": standalonetest.DevToken}

	r := runEnv(t, env, "upload", "--wait", dir)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "4 files, 4 documents: 4 uploaded, 0 already there, 0 refused")
	for file, tmpl := range map[string]string{
		`alpine-1\.pdf`: "synthetic-alpine", `in/nordwind-1\.pdf`: "synthetic-nordwind",
		`archive\.zip:q3/alpine-2\.pdf`: "synthetic-alpine", `archive\.zip:nordwind-2\.PDF`: "synthetic-nordwind",
	} {
		require.Regexp(t, `(?m)^success +\S+ +`+tmpl+` +\S*`+file+`$`, r.stdout)
	}
	require.Regexp(t, `(?m)^synthetic-alpine +2$`, r.stdout)
	require.Regexp(t, `(?m)^synthetic-nordwind +2$`, r.stdout)

	// Each document was read as its buyer's PO: the webhook's openTRANS
	// carries the order id printed on the PDF, and the history names the
	// routing step.
	ids := regexp.MustCompile(`(?m)^success +(\S+) +\S+ +(\S+)$`).FindAllStringSubmatch(r.stdout, -1)
	require.Len(t, ids, 4)
	want := map[string]string{"alpine-1.pdf": alpine1ID, "nordwind-1.pdf": nordwind1ID, "alpine-2.pdf": alpine2ID, "nordwind-2.PDF": nordwind2ID}
	got := map[string]delivery{}
	for len(got) < 4 {
		select {
		case d := <-hooks:
			got[d.LogID] = d
		case <-time.After(2 * time.Minute):
			t.Fatalf("%d of 4 webhooks", len(got))
		}
	}
	for _, m := range ids {
		d := got[m[1]]
		require.Equal(t, "success", d.Status)
		file := filepath.Base(m[2][strings.LastIndex(m[2], ":")+1:]) // a zip entry is "archive.zip:dir/name.pdf"
		require.Contains(t, d.Result, "<ORDER_ID>"+want[file]+"</ORDER_ID>", file)
		res := runEnv(t, map[string]string{"INTAKE_DATABASE_URL": sys.DatabaseURL}, "documents", "show", m[1], "--json")
		require.Equal(t, 0, res.code, res.stdout+res.stderr)
		require.Contains(t, res.stdout, "routed by keywords: template "+d.Template+" (priority 5), the only one of ")
	}
}

// delivery is the part of a webhook body the test reads.
type delivery struct {
	LogID    string `json:"log_id"`
	Template string `json:"template"`
	Status   string `json:"status"`
	Result   string `json:"result"` // the openTRANS XML
}

// Without route_unaddressed the contract's 422 stands: upload without
// --template or --party-id refuses every file and says why.
func TestUploadUnroutedRefused(t *testing.T) {
	t.Parallel()
	alpine1, _ := syntheticPO(t, "alpine-1")
	sys := startRoutingSystem(t, false, freeAddr(t))
	dir := fixture(t, map[string][]byte{"alpine-1.pdf": alpine1})
	r := runEnv(t, map[string]string{"DOCINTAKE_URL": sys.URL, "DOCINTAKE_TOKEN": standalonetest.DevToken}, "upload", dir)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "1 files, 1 documents: 0 uploaded, 0 already there, 1 refused")
	require.Regexp(t, `(?m)validation_failed: .*template`, r.stdout)
}
