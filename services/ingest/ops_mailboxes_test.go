package ingest_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/ingest"
	"github.com/stretchr/testify/require"
)

// The overview lists the mail intake's mailboxes with their health; an
// operator limited to a client sees only that client's mailboxes.
func TestOpsShowsMailboxes(t *testing.T) {
	t.Parallel()
	b := setupConsole(t, ingest.OpsConfig{Token: opsToken})
	ctx := t.Context()
	require.NoError(t, b.st.RecordMailboxPass(ctx, store.MailboxPass{MailboxID: "orders-acme", ClientID: "acme", Reader: "h:1",
		Err: "imap login 127.0.0.1:993 as orders: authentication failed", Unprocessed: 3, OldestUnprocessed: time.Now().Add(-2 * time.Hour)}))
	require.NoError(t, b.st.RecordMailboxPass(ctx, store.MailboxPass{MailboxID: "orders-globex", ClientID: "globex", Reader: "h:1"}))

	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/", opsToken, nil))
	require.Regexp(t, `<tr id="mailbox-orders-acme" class="alert"><td>orders-acme</td><td>acme</td><td>failing</td><td class="num">–</td><td class="num">3</td><td class="num">2h[0-9]+m[0-9]+s</td>`, page)
	require.Contains(t, page, "authentication failed")
	require.Regexp(t, `<tr id="mailbox-orders-globex"><td>orders-globex</td><td>globex</td><td>ok</td>`, page)

	addOperator(t, b.st, "bob", "dio_bob-token-0123456789", "acme")
	cookie := loginAs(t, b.url, "dio_bob-token-0123456789")
	page = readBody(t, opsRequest(t, "GET", b.url+"/ops/", "", nil, "Cookie", cookie))
	require.Contains(t, page, `id="mailbox-orders-acme"`)
	require.NotContains(t, page, "orders-globex")
}
