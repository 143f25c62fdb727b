package store_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

// A sender's exact address wins over its domain; keys match whatever their
// case; another client's mapping and other kinds do not count.
func TestSenderParty(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	require.NoError(t, s.PutMappings(ctx, "acme", []store.Mapping{
		{Kind: store.MappingSender, Key: "Buyer.Example", Value: "CONTOSO"},
		{Kind: store.MappingSender, Key: "po@buyer.example", Value: "CONTOSO-PO"},
		{Kind: "article", Key: "other.example", Value: "NOT-A-PARTY"},
	}))
	require.NoError(t, s.PutMappings(ctx, "globex", []store.Mapping{{Kind: store.MappingSender, Key: "other.example", Value: "GLOBEX"}}))

	for from, want := range map[string][2]string{
		"po@buyer.example":   {"po@buyer.example", "CONTOSO-PO"},
		"PO@Buyer.Example":   {"po@buyer.example", "CONTOSO-PO"},
		"jane@buyer.example": {"Buyer.Example", "CONTOSO"},
	} {
		key, party, ok, err := s.SenderParty(ctx, "acme", from)
		require.NoError(t, err)
		require.True(t, ok, from)
		require.Equal(t, want, [2]string{key, party}, from)
	}
	for _, from := range []string{"x@other.example", "", "buyer.example.evil"} {
		_, _, ok, err := s.SenderParty(ctx, "acme", from)
		require.NoError(t, err)
		require.False(t, ok, from)
	}
}

// A document stored without a template records its creating note; routing
// it sets the template with its event once, and a second route conflicts.
func TestRouteDocument(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m-route", "pdf")
	d.Template = ""
	got, created, err := s.CreateDocumentNoted(ctx, d, job, "route pending: no template or party_id")
	require.NoError(t, err)
	require.True(t, created)
	require.Empty(t, got.Template)

	r := store.Route{DocumentID: got.ID, State: document.StateReceived, Template: "alpine", Actor: "processor",
		Detail: "routed by keywords: template alpine"}
	require.NoError(t, s.RouteDocument(ctx, r))
	after, err := s.Document(ctx, got.ID)
	require.NoError(t, err)
	require.Equal(t, "alpine", after.Template)
	r.Template = "nordwind"
	require.Equal(t, document.ECONFLICT, document.ErrorKind(s.RouteDocument(ctx, r)))

	ev, err := s.Events(ctx, got.ID)
	require.NoError(t, err)
	require.Len(t, ev, 2)
	require.Equal(t, "route pending: no template or party_id", ev[0].Detail)
	require.Equal(t, "routed by keywords: template alpine", ev[1].Detail)
}

// route_unaddressed is off by default and read with the client by token.
func TestRouteUnaddressedSetting(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	c, err := s.ClientByToken(ctx, "tok-acme")
	require.NoError(t, err)
	require.False(t, c.RouteUnaddressed)
	require.NoError(t, s.SetRouteUnaddressed(ctx, "acme", true))
	c, err = s.ClientByToken(ctx, "tok-acme")
	require.NoError(t, err)
	require.True(t, c.RouteUnaddressed)
	c, err = s.Client(ctx, "acme")
	require.NoError(t, err)
	require.True(t, c.RouteUnaddressed)
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(s.SetRouteUnaddressed(ctx, "nobody", true)))
}
