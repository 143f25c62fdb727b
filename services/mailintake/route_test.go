package mailintake_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/mailintake"
	"github.com/stretchr/testify/require"
)

// The routing chain's sender step for mail (issue 29): the mailbox's
// senders map first, then the client's sender mapping (intakectl mappings
// --kind sender); a sender neither names is no longer refused: its PDF
// becomes a document without a template for the processor to route by
// keywords. Every document's history says how its template was chosen.
func TestMailSenderRouting(t *testing.T) {
	e := setup(t)
	require.NoError(t, e.st.PutMappings(t.Context(), "acme", []store.Mapping{
		{Kind: store.MappingSender, Key: "newbuyer.example", Value: "OTHER"},
		{Kind: store.MappingSender, Key: "jane@buyer.example", Value: "OTHER"}, // the mailbox's map wins
	}))
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "m-box@buyer.example", "PO 1", part{"application/pdf", "a.pdf", pdfBytes("a")}))
	e.dc.appendMail(t, "INBOX", mailBytes("po@newbuyer.example", "m-map@newbuyer.example", "PO 2", part{"application/pdf", "b.pdf", pdfBytes("b")}))
	e.dc.appendMail(t, "INBOX", mailBytes("someone@stranger.example", "m-none@stranger.example", "PO 3", part{"application/pdf", "c.pdf", pdfBytes("c")}))
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, 3, e.dc.count(t, "Processed"))
	require.Equal(t, 0, e.dc.count(t, "Not processed"))

	got := storetest.QueryMap[string, string](t, e.pool, `SELECT d.message_id, d.template || ' | ' || coalesce(d.party_id, '') || ' | ' || ev.detail
		FROM documents d JOIN document_events ev ON ev.document_id = d.id AND ev.from_state IS NULL`)
	require.Equal(t, map[string]string{
		"m-box@buyer.example#1":     "contoso-po | CONTOSO | routed by sender: sender jane@buyer.example is mapped to party_id CONTOSO by the senders of mailbox orders-acme; template contoso-po",
		"m-map@newbuyer.example#1":  `other-po | OTHER | routed by sender: sender po@newbuyer.example is mapped to party_id OTHER by the client's sender mapping "newbuyer.example"; template other-po`,
		"m-none@stranger.example#1": " |  | route pending: sender someone@stranger.example is in no sender mapping; the processor chooses the template by keywords",
	}, got)
}
