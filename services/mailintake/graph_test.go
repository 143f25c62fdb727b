package mailintake_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/mailintake"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// graphSetup is the intake of env (PostgreSQL, intake, client acme) with a
// mailbox read through the Graph fake instead of Dovecot.
func graphSetup(t *testing.T) (env, *graphFake) {
	t.Helper()
	fake := newGraphFake(t)
	e := intakeEnv(t)
	secretFile := filepath.Join(t.TempDir(), "graph-secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(fake.Secret+"\n"), 0o600))
	mb := mailbox.Mailbox{ID: "orders-acme", Client: "acme", Folder: "INBOX", ProcessedFolder: "Processed", ErrorFolder: "Not processed",
		Graph: &mailbox.Graph{TenantID: fake.Tenant, ClientID: fake.ClientID, ClientSecretFile: secretFile, User: fake.User,
			BaseURL: fake.URL + "/v1.0", TokenURL: fake.URL + "/" + fake.Tenant + "/oauth2/v2.0/token"},
		Senders: map[string]string{"buyer.example": "CONTOSO", "po@other.example": "OTHER"}}
	require.NoError(t, mb.Validate())
	e.mb = mb
	return e, fake
}

func pdfAtt(id, name string) fakeAttachment {
	return fakeAttachment{ID: id, Name: name, ContentType: "application/pdf", Data: pdfBytes(name)}
}

// Four mails over two delta pages, under throttling: PDFs attached small
// (contentBytes) and large (/$value), inside a zip and inside an attached
// mail (itemAttachment) become documents named <internetMessageId>#n; a
// mail without a PDF goes to the error folder, one from an unknown sender
// becomes a document for the routing chain (issue 29: no party_id, the
// template chosen later); the delta link is kept in PostgreSQL.
func TestGraphMailbox(t *testing.T) {
	e, fake := graphSetup(t)
	big := append(pdfBytes("big"), bytes.Repeat([]byte("%"), 3<<20)...) // above the 3 MiB of contentBytes
	forwarded := mailBytes("po@other.example", "inner@other.example", "Original PO", part{"application/pdf", "inner.pdf", pdfBytes("inner")})
	fake.deliver(fakeMessage{ID: "AAMk-1=", Subject: "PO 1", InternetMessageID: "<po-1@buyer.example>", From: "Jane|jane@buyer.example",
		Atts: []fakeAttachment{pdfAtt("a1", "a.pdf"), {ID: "a2", Name: "lines.xls", ContentType: "application/vnd.ms-excel", Data: []byte("xls")},
			{ID: "a3", Name: "b", ContentType: "application/octet-stream", Data: pdfBytes("b")}}})
	fake.deliver(fakeMessage{ID: "AAMk-2=", Subject: "Fwd: PO 2", InternetMessageID: "<po-2@other.example>", From: "PO|po@other.example",
		Atts: []fakeAttachment{{ID: "b1", Name: "big.pdf", ContentType: "application/pdf", Data: big},
			{ID: "b2", Name: "Original PO", Item: true, Data: forwarded},
			{ID: "b3", Name: "orders.zip", ContentType: "application/zip", Data: mailboxtest.Zip(t, map[string][]byte{"z.pdf": pdfBytes("z")})}}})
	fake.deliver(fakeMessage{ID: "AAMk-3=", Subject: "Hello", InternetMessageID: "<nopdf@buyer.example>", From: "Jane|jane@buyer.example",
		Atts: []fakeAttachment{{ID: "c1", Name: "logo.png", ContentType: "image/png", Data: []byte("\x89PNG")}}})
	fake.deliver(fakeMessage{ID: "AAMk-4=", Subject: "PO", InternetMessageID: "<stranger@x>", From: "|someone@stranger.example",
		Atts: []fakeAttachment{pdfAtt("d1", "a.pdf")}})
	fake.Throttle(http.StatusTooManyRequests, http.StatusServiceUnavailable)

	passErr, runErr := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.NoError(t, runErr)
	require.Equal(t, map[string]string{
		"po-1@buyer.example#1": "a.pdf | PO 1 | CONTOSO",
		"po-1@buyer.example#2": "b | PO 1 | CONTOSO",
		"po-2@other.example#1": "big.pdf | Fwd: PO 2 | OTHER",
		"po-2@other.example#2": "inner.pdf | Fwd: PO 2 | OTHER",
		"po-2@other.example#3": "z.pdf | Fwd: PO 2 | OTHER",
		"stranger@x#1":         "a.pdf | PO | ",
	}, e.documents(t))
	require.Equal(t, "Processed", fake.folder("AAMk-1="))
	require.Equal(t, "Processed", fake.folder("AAMk-2="))
	require.Equal(t, "Not processed", fake.folder("AAMk-3="))
	require.Equal(t, "Processed", fake.folder("AAMk-4="))
	reasons := storetest.QueryMap[string, string](t, e.pool, `SELECT message_id, outcome || ': ' || reason FROM mailbox_mails`)
	require.Equal(t, "failed: no PDF attachment (other attachments: logo.png (image/png))", reasons["nopdf@buyer.example"])

	throttled, rounds, _ := fake.counters()
	require.Equal(t, 2, throttled, "both throttled answers were waited out")
	require.Equal(t, 1, rounds)
	reqs := strings.Join(fake.Requests(), "\n")
	require.Contains(t, reqs, "/messages/AAMk-2=/attachments/b1/$value", "the large PDF is read raw")
	require.NotContains(t, reqs, "/attachments/a1/$value", "a small PDF comes with contentBytes")
	require.Contains(t, reqs, "$skiptoken=", "the round was read over more than one page")
	link := storetest.QueryMap[string, string](t, e.pool, `SELECT mailbox_id, delta_link FROM mailbox_positions`)["orders-acme"]
	require.True(t, strings.HasPrefix(link, fake.URL+"/v1.0/users/orders@acme.example/mailFolders/inbox/messages/delta?$deltatoken="), link)
}

func poMail(id, messageID string) fakeMessage {
	return fakeMessage{ID: id, Subject: "PO", InternetMessageID: "<" + messageID + ">", From: "Jane|jane@buyer.example",
		Atts: []fakeAttachment{pdfAtt(id+"-a", "po.pdf")}}
}

// A restart goes on from the stored delta link; a crash between the
// documents and the move makes no duplicate; an expired delta link reads
// the folder from the start, without duplicates either. An access token
// revoked mid-pass is renewed.
func TestGraphDeltaRestartAndCrash(t *testing.T) {
	e, fake := graphSetup(t)
	fake.deliver(poMail("AAMk-1=", "m1@buyer.example"))
	passErr, _ := e.pass(t, mailintake.Hooks{BeforeMove: func(string, uint32) error { fake.RevokeTokens(); return nil }})
	require.NoError(t, passErr)
	require.Equal(t, "Processed", fake.folder("AAMk-1="))
	_, _, tokens := fake.counters()
	require.Equal(t, 2, tokens, "the move got a 401 and a new token")

	fake.deliver(poMail("AAMk-2=", "m2@buyer.example"))
	crash := errors.New("killed before the move")
	passErr, runErr := e.pass(t, mailintake.Hooks{BeforeMove: func(string, uint32) error { return crash }})
	require.ErrorIs(t, passErr, crash)
	require.ErrorIs(t, runErr, crash)
	require.Equal(t, "Inbox", fake.folder("AAMk-2="))
	require.Len(t, e.documents(t), 2)

	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, "Processed", fake.folder("AAMk-2="))
	_, rounds, _ := fake.counters()
	require.Equal(t, 3, rounds)
	delta := 0
	for _, r := range fake.Requests() {
		if strings.Contains(r, "$deltatoken=") {
			delta++
		}
	}
	require.Equal(t, 2, delta, "the second and third runs went on from the stored delta link")

	fake.ExpireDeltaTokens()
	fake.deliver(poMail("AAMk-3=", "m3@buyer.example"))
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, "Processed", fake.folder("AAMk-3="))
	require.Equal(t, map[string]string{
		"m1@buyer.example#1": "po.pdf | PO | CONTOSO",
		"m2@buyer.example#1": "po.pdf | PO | CONTOSO",
		"m3@buyer.example#1": "po.pdf | PO | CONTOSO",
	}, e.documents(t))
	outcomes := storetest.QueryMap[string, string](t, e.pool, `SELECT message_id, outcome FROM mailbox_mails`)
	require.Equal(t, map[string]string{"m1@buyer.example": "processed", "m2@buyer.example": "processed", "m3@buyer.example": "processed"}, outcomes)
}

// A wrong client secret fails the pass with Entra's error code; neither
// the secret nor any access token appears in an error or a log line.
func TestGraphSecretsNeverLogged(t *testing.T) {
	e, fake := graphSetup(t)
	fake.deliver(poMail("AAMk-1=", "m1@buyer.example"))
	core, logs := observer.New(zapcore.DebugLevel)
	wrong := filepath.Join(t.TempDir(), "wrong")
	require.NoError(t, os.WriteFile(wrong, []byte("wrong-secret-Kx7"), 0o600))
	good := e.mb.Graph.ClientSecretFile
	e.mb.Graph.ClientSecretFile = wrong
	e.log = zap.New(core)
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.ErrorContains(t, passErr, "invalid_client")
	require.NotContains(t, passErr.Error(), "wrong-secret-Kx7")

	e.mb.Graph.ClientSecretFile = good
	fake.Throttle(http.StatusServiceUnavailable)
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	_, _, tokens := fake.counters()
	require.Equal(t, 1, tokens)
	require.Positive(t, logs.Len())
	for _, entry := range logs.All() {
		line := fmt.Sprint(entry.Message, entry.ContextMap())
		for _, secret := range []string{"wrong-secret-Kx7", fake.Secret, "fake-access-token"} {
			require.NotContains(t, line, secret)
		}
	}
}

// A nextLink to another host is not followed: the bearer token goes only
// below base_url.
func TestGraphRefusesForeignNextLink(t *testing.T) {
	e, fake := graphSetup(t)
	var called atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called.Add(1) }))
	t.Cleanup(other.Close)
	fake.foreignNextLink = other.URL + "/v1.0/users/orders@acme.example/mailFolders/inbox/messages/delta"
	for _, id := range []string{"AAMk-1=", "AAMk-2=", "AAMk-3="} {
		fake.deliver(poMail(id, id+"@buyer.example"))
	}
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.ErrorContains(t, passErr, "not below base_url")
	require.Zero(t, called.Load())
	require.Empty(t, e.documents(t))
}

// Check (intakectl mailboxes test) of a Graph mailbox logs in and counts
// the folders' mails, creating nothing: the processed and error folders
// are made by the first pass.
func TestGraphCheck(t *testing.T) {
	e, fake := graphSetup(t)
	fake.deliver(poMail("AAMk-1=", "m1@buyer.example"))
	fake.deliver(poMail("AAMk-2=", "m2@buyer.example"))
	rep, err := mailbox.Check(t.Context(), e.mb, os.Getenv)
	require.NoError(t, err)
	require.True(t, rep.OK())
	require.Equal(t, fake.URL+"/v1.0", rep.Server)
	require.Equal(t, []mailbox.CheckFolder{
		{Role: "folder", Name: "INBOX", Exists: true, Messages: 2, Unseen: 2},
		{Role: "processed_folder", Name: "Processed"},
		{Role: "error_folder", Name: "Not processed"},
	}, rep.Folders)
	require.NotContains(t, strings.Join(fake.Requests(), "\n"), "POST")

	e.mb.Graph.ClientSecretEnv, e.mb.Graph.ClientSecretFile = "NO_SUCH_SECRET_VAR", ""
	_, err = mailbox.Check(t.Context(), e.mb, func(string) string { return "wrong" })
	require.ErrorContains(t, err, "invalid_client")
}
