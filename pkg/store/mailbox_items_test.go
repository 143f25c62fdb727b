package store_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

// Graph message ids get UIDs 1, 2, … in the order first seen, the same UID
// every later time, and a numbering of their own per UIDVALIDITY and
// mailbox.
func TestMailboxItemUIDs(t *testing.T) {
	st := storetest.Store(t)
	ctx := t.Context()
	uids, err := st.MailboxItemUIDs(ctx, "mb", 0, []string{"AAMk-a", "AAMk-b"})
	require.NoError(t, err)
	require.Equal(t, []uint32{1, 2}, uids)
	uids, err = st.MailboxItemUIDs(ctx, "mb", 0, []string{"AAMk-c", "AAMk-a", "AAMk-c"})
	require.NoError(t, err)
	require.Equal(t, []uint32{3, 1, 3}, uids)
	uids, err = st.MailboxItemUIDs(ctx, "other", 0, []string{"AAMk-c"})
	require.NoError(t, err)
	require.Equal(t, []uint32{1}, uids)
}

// The delta link is kept with the position of its UIDVALIDITY: a mailbox
// that was read over IMAP starts its Graph position afresh, and an IMAP
// position read afterwards sees a UIDVALIDITY change.
func TestMailboxDeltaLink(t *testing.T) {
	st := storetest.Store(t)
	ctx := t.Context()
	link, err := st.MailboxDeltaLink(ctx, "mb", 0)
	require.NoError(t, err)
	require.Empty(t, link)
	require.NoError(t, st.SetMailboxPosition(ctx, "mb", store.MailboxPosition{UIDValidity: 7, LastUID: 9}))
	link, err = st.MailboxDeltaLink(ctx, "mb", 0)
	require.NoError(t, err)
	require.Empty(t, link, "an IMAP position is no delta link")
	require.NoError(t, st.SetMailboxDeltaLink(ctx, "mb", 0, "https://graph.example/delta?$deltatoken=1"))
	require.NoError(t, st.SetMailboxDeltaLink(ctx, "mb", 0, "https://graph.example/delta?$deltatoken=2"))
	link, err = st.MailboxDeltaLink(ctx, "mb", 0)
	require.NoError(t, err)
	require.Equal(t, "https://graph.example/delta?$deltatoken=2", link)
	pos, ok, err := st.MailboxPosition(ctx, "mb")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.MailboxPosition{UIDValidity: 0, LastUID: 0}, pos)
}
