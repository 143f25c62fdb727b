package intake_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// routed submits a PDF without template and party_id through the routing
// chain and returns the document with its creating event's detail.
func (f fixture) routed(t *testing.T, messageID string, r intake.Route) (template, party, note string) {
	t.Helper()
	s := f.sub(messageID, messageID)
	s.Template, s.Route = "", &r
	rec, err := f.svc.Submit(t.Context(), s)
	require.NoError(t, err)
	require.True(t, rec.Created)
	ev, err := f.svc.Store.(*store.Store).Events(t.Context(), rec.Document.ID)
	require.NoError(t, err)
	require.NotEmpty(t, ev)
	return rec.Document.Template, rec.Document.PartyID, ev[0].Detail
}

// The routing chain's sender step: the channel's own map first, then the
// client's sender mapping (the address before its domain); a party with a
// template chooses it at once, anything else waits for the processor
// (template "") with the reason in the history.
func TestSubmitRoutedBySender(t *testing.T) {
	t.Parallel()
	f := setup(t)
	st := f.svc.Store.(*store.Store)
	require.NoError(t, st.PutMappings(t.Context(), "acme", []store.Mapping{
		{Kind: store.MappingSender, Key: "buyer.example", Value: "BUYER"},
		{Kind: store.MappingSender, Key: "new@buyer.example", Value: "NEW-BUYER"},
	}))

	tmpl, party, note := f.routed(t, "m-1", intake.Route{Sender: "Jane <Jane@Buyer.example>"})
	require.Equal(t, [2]string{"po", "BUYER"}, [2]string{tmpl, party})
	require.Equal(t, `routed by sender: sender jane@buyer.example is mapped to party_id BUYER by the client's sender mapping "buyer.example"; template po`, note)

	// The mailbox's own senders map wins over the client's mapping.
	tmpl, party, note = f.routed(t, "m-2", intake.Route{Sender: "jane@buyer.example", SenderParty: "BUYER", Via: "mailbox orders-acme"})
	require.Equal(t, [2]string{"po", "BUYER"}, [2]string{tmpl, party})
	require.Equal(t, "routed by sender: sender jane@buyer.example is mapped to party_id BUYER by mailbox orders-acme; template po", note)

	// A mapped party without a template: the processor continues the chain.
	tmpl, party, note = f.routed(t, "m-3", intake.Route{Sender: "new@buyer.example"})
	require.Equal(t, [2]string{"", "NEW-BUYER"}, [2]string{tmpl, party})
	require.Contains(t, note, "route pending: sender new@buyer.example is mapped to party_id NEW-BUYER")
	require.Contains(t, note, "which no template claims; the processor chooses the template by keywords")

	// An unknown sender, and a channel without senders (HTTP).
	tmpl, party, note = f.routed(t, "m-4", intake.Route{Sender: "someone@stranger.example"})
	require.Equal(t, [2]string{"", ""}, [2]string{tmpl, party})
	require.Equal(t, "route pending: sender someone@stranger.example is in no sender mapping; the processor chooses the template by keywords", note)
	tmpl, _, note = f.routed(t, "m-5", intake.Route{})
	require.Empty(t, tmpl)
	require.Equal(t, "route pending: no template or party_id; the processor chooses the template by keywords", note)
}

// Without Route the contract stands: neither template nor party_id is
// refused; with a template or party_id, Route changes nothing.
func TestSubmitRouteOnlyWhenUnaddressed(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.sub("m-1", "x")
	s.Template = ""
	_, err := f.svc.Submit(t.Context(), s)
	require.Equal(t, intake.CodeTemplateNotFound, code(err))

	s = f.sub("m-2", "y")
	s.Route = &intake.Route{SenderParty: "OTHER", Via: "mailbox x"}
	rec, err := f.svc.Submit(t.Context(), s)
	require.NoError(t, err)
	require.Equal(t, "po", rec.Document.Template)
	require.Empty(t, rec.Document.PartyID)
}
