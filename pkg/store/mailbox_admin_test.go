package store_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

// A mailbox is added for an existing client only, replaced by id, listed
// and removed; removing an unknown one says so.
func TestMailboxConfigs(t *testing.T) {
	st := storetest.Store(t)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme"}))
	err := st.UpsertMailboxConfig(ctx, store.MailboxConfig{ID: "orders-x", ClientID: "nobody", Config: "id: orders-x", Source: store.MailboxFromCLI})
	require.Equal(t, document.EINVALID, document.ErrorKind(err), "a mailbox of a client that does not exist: %v", err)

	require.NoError(t, st.UpsertMailboxConfig(ctx, store.MailboxConfig{ID: "orders-acme", ClientID: "acme", Config: "v1", Source: store.MailboxFromFile}))
	require.NoError(t, st.UpsertMailboxConfig(ctx, store.MailboxConfig{ID: "orders-acme", ClientID: "acme", Config: "v2", Source: store.MailboxFromCLI}))
	all, err := st.MailboxConfigs(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.Equal(t, "v2", all[0].Config)
	require.Equal(t, store.MailboxFromCLI, all[0].Source)
	one, err := st.MailboxConfig(ctx, "orders-acme")
	require.NoError(t, err)
	require.Equal(t, "v2", one.Config)

	require.NoError(t, st.DeleteMailboxConfig(ctx, "orders-acme"))
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(st.DeleteMailboxConfig(ctx, "orders-acme")))
	_, err = st.MailboxConfig(ctx, "orders-acme")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
}

// A failed pass counts and keeps its error; a success resets the count but
// keeps the last error for context. The status joins the health row with
// the window's mails and documents, filtered by client.
func TestMailboxStatuses(t *testing.T) {
	st := storetest.Store(t)
	ctx := t.Context()
	for _, c := range []string{"acme", "other"} {
		require.NoError(t, st.UpsertClient(ctx, document.Client{ID: c}))
	}
	require.NoError(t, st.UpsertMailboxConfig(ctx, store.MailboxConfig{ID: "orders-acme", ClientID: "acme", Config: "c", Source: store.MailboxFromCLI}))
	require.NoError(t, st.UpsertMailboxConfig(ctx, store.MailboxConfig{ID: "orders-other", ClientID: "other", Config: "c", Source: store.MailboxFromCLI}))

	arrived := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	pass := store.MailboxPass{MailboxID: "orders-acme", ClientID: "acme", Reader: "host:1", Err: "imap connect: refused", Unprocessed: 2, OldestUnprocessed: arrived}
	require.NoError(t, st.RecordMailboxPass(ctx, pass))
	require.NoError(t, st.RecordMailboxPass(ctx, pass))
	got := statusOf(t, st, nil, "orders-acme")
	require.Equal(t, 2, got.FailedPasses)
	require.Equal(t, "failing", got.Health())
	require.True(t, got.LastSuccessAt.IsZero())
	require.True(t, got.OldestUnprocessed.Equal(arrived))

	pass.Err, pass.Unprocessed, pass.OldestUnprocessed = "", 0, time.Time{}
	require.NoError(t, st.RecordMailboxPass(ctx, pass))
	// One mail processed with two documents (one made earlier), one failed,
	// one failing its reads.
	require.NoError(t, st.SetMailboxPosition(ctx, "orders-acme", store.MailboxPosition{UIDValidity: 1}))
	m := store.MailboxMail{MailboxID: "orders-acme", UIDValidity: 1, UID: 1, MessageID: "a@x", Outcome: store.MailCommitted}
	require.NoError(t, st.CommitMail(ctx, m, []store.MailboxAttachment{
		{Index: 1, MessageID: "a@x#1", Filename: "a.pdf", Outcome: store.AttachmentCreated, LogID: "L1"},
		{Index: 2, MessageID: "a@x#2", Filename: "b.pdf", Outcome: store.AttachmentReplayed, LogID: "L0"}}))
	m.Outcome = store.MailProcessed
	require.NoError(t, st.FinishMail(ctx, m))
	require.NoError(t, st.FinishMail(ctx, store.MailboxMail{MailboxID: "orders-acme", UIDValidity: 1, UID: 2, MessageID: "b@x", Outcome: store.MailFailed, Reason: "no PDF"}))
	_, err := st.RecordMailFailure(ctx, store.MailboxMail{MailboxID: "orders-acme", UIDValidity: 1, UID: 3, MessageID: "c@x", Reason: "object store down"})
	require.NoError(t, err)

	got = statusOf(t, st, nil, "orders-acme")
	require.Equal(t, "ok", got.Health())
	require.Equal(t, 0, got.FailedPasses)
	require.Equal(t, "imap connect: refused", got.LastError)
	require.False(t, got.LastSuccessAt.IsZero())
	require.Equal(t, [5]int{3, 1, 1, 1, 1}, [5]int{got.Seen, got.Processed, got.Failed, got.Retrying, got.DocumentsCreated})
	require.Equal(t, "never", statusOf(t, st, nil, "orders-other").Health())

	only, err := st.MailboxStatuses(ctx, []string{"other"}, 24*time.Hour)
	require.NoError(t, err)
	require.Len(t, only, 1)
	require.Equal(t, "orders-other", only[0].MailboxID)
}

func statusOf(t *testing.T, st *store.Store, clients []string, id string) store.MailboxStatus {
	t.Helper()
	all, err := st.MailboxStatuses(t.Context(), clients, 24*time.Hour)
	require.NoError(t, err)
	for _, m := range all {
		if m.MailboxID == id {
			return m
		}
	}
	t.Fatalf("no status of %s in %+v", id, all)
	return store.MailboxStatus{}
}
