package store_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

// One session at a time holds a mailbox's lock; another mailbox's is free;
// a released lock can be taken again.
func TestMailboxLockOneHolder(t *testing.T) {
	st := storetest.Store(t)
	ctx := t.Context()
	first, ok, err := st.TryMailboxLock(ctx, "orders-acme")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, first.Held(ctx))
	_, ok, err = st.TryMailboxLock(ctx, "orders-acme")
	require.NoError(t, err)
	require.False(t, ok, "a second poller of the same mailbox stands by")
	other, ok, err := st.TryMailboxLock(ctx, "orders-other")
	require.NoError(t, err)
	require.True(t, ok)
	other.Release()
	first.Release()
	again, ok, err := st.TryMailboxLock(ctx, "orders-acme")
	require.NoError(t, err)
	require.True(t, ok, "the lock is free once its session ends")
	again.Release()
}

// A mail's commit records its attachments; finishing it advances the
// position of its UIDVALIDITY only.
func TestMailboxPositionAdvancesOnFinish(t *testing.T) {
	st := storetest.Store(t)
	ctx := t.Context()
	require.NoError(t, st.SetMailboxPosition(ctx, "mb", store.MailboxPosition{UIDValidity: 7}))
	m := store.MailboxMail{MailboxID: "mb", UIDValidity: 7, UID: 3, MessageID: "m@x", Outcome: store.MailCommitted}
	require.NoError(t, st.CommitMail(ctx, m, []store.MailboxAttachment{
		{Index: 1, MessageID: "m@x#1", Filename: "a.pdf", Outcome: store.AttachmentCreated, LogID: "L1"},
		{Index: 2, MessageID: "m@x#2", Filename: "b.pdf", Outcome: store.AttachmentRefused, Reason: "no template"},
	}))
	atts, err := st.MailAttachments(ctx, "mb", 7, 3)
	require.NoError(t, err)
	require.Len(t, atts, 2)
	require.Equal(t, "L1", atts[0].LogID)
	require.Equal(t, "no template", atts[1].Reason)
	m.Outcome = store.MailProcessed
	require.NoError(t, st.FinishMail(ctx, m))
	pos, ok, err := st.MailboxPosition(ctx, "mb")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.MailboxPosition{UIDValidity: 7, LastUID: 3}, pos)
	got, ok, err := st.MailboxMail(ctx, "mb", 7, 3)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.MailProcessed, got.Outcome)
	// A mail of an older UIDVALIDITY does not move the new position.
	require.NoError(t, st.FinishMail(ctx, store.MailboxMail{MailboxID: "mb", UIDValidity: 6, UID: 99, MessageID: "o@x", Outcome: store.MailProcessed}))
	pos, _, err = st.MailboxPosition(ctx, "mb")
	require.NoError(t, err)
	require.Equal(t, uint32(3), pos.LastUID)
}

// A committed mail the folder no longer lists was moved by an intake
// stopped before its record: it is settled as processed, or failed when it
// was refused; a committed mail still listed, another UIDVALIDITY's and
// another mailbox's stay as they are.
func TestSettleMovedMails(t *testing.T) {
	st := storetest.Store(t)
	ctx := t.Context()
	commit := func(mailbox string, validity, uid uint32, reason string) {
		t.Helper()
		require.NoError(t, st.CommitMail(ctx, store.MailboxMail{MailboxID: mailbox, UIDValidity: validity, UID: uid,
			MessageID: "m@x", Outcome: store.MailCommitted, Reason: reason}, nil))
	}
	commit("mb", 7, 3, "")               // moved to Processed, not recorded
	commit("mb", 7, 4, "b.pdf: refused") // moved to the error folder, not recorded
	commit("mb", 7, 5, "")               // its move failed: still in the folder
	commit("mb", 6, 9, "")               // an older UIDVALIDITY
	commit("other", 7, 3, "")            // another mailbox

	settled, err := st.SettleMovedMails(ctx, "mb", 7, []uint32{5, 6})
	require.NoError(t, err)
	require.ElementsMatch(t, []uint32{3, 4}, settled)
	for uid, want := range map[uint32]string{3: store.MailProcessed, 4: store.MailFailed, 5: store.MailCommitted} {
		got, ok, err := st.MailboxMail(ctx, "mb", 7, uid)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, got.Outcome, "uid %d", uid)
	}
	got, _, err := st.MailboxMail(ctx, "mb", 7, 4)
	require.NoError(t, err)
	require.Equal(t, "b.pdf: refused", got.Reason, "the refusal stays the failed mail's reason")
	for _, k := range []struct {
		mailbox  string
		validity uint32
		uid      uint32
	}{{"mb", 6, 9}, {"other", 7, 3}} {
		got, _, err := st.MailboxMail(ctx, k.mailbox, k.validity, k.uid)
		require.NoError(t, err)
		require.Equal(t, store.MailCommitted, got.Outcome, "%s %d/%d", k.mailbox, k.validity, k.uid)
	}
	settled, err = st.SettleMovedMails(ctx, "mb", 7, nil)
	require.NoError(t, err)
	require.Equal(t, []uint32{5}, settled, "a second settle only finds what left the folder since")
}
