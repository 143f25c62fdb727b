package ingest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

// A party_id no template claims is 400 template_not_found for a client with
// the default unknown_party (reject), and becomes a document of the
// built-in template generic for a client with unknown_party: generic; a
// party_id a template claims keeps its template either way.
func TestUnknownPartyGeneric(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.st.SetUnknownParty(t.Context(), "globex", document.UnknownPartyGeneric))

	up := func(token, messageID, party string) response {
		return b.do(t, b.multipart(t, token, form{fields: fields("message_id", messageID, "subject", "PO", "party_id", party), file: orderPDF}))
	}
	res := up("tok-acme", "u-1", "NEW-BUYER")
	require.Equal(t, http.StatusBadRequest, res.status, string(res.raw))
	require.Equal(t, "template_not_found", res.body["code"])

	for _, c := range []struct{ party, template string }{{"NEW-BUYER", "generic"}, {"CONTOSO", "contoso-po"}} {
		res = up("tok-globex", "u-"+c.party, c.party)
		require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
		d, err := b.st.DocumentByLogID(t.Context(), "globex", res.body["log_id"].(string))
		require.NoError(t, err)
		require.Equal(t, c.template, d.Template)
		require.Equal(t, c.party, d.PartyID)
	}
}

// The client template API refuses a template named generic, the built-in
// reader's name, with its own code, whether the URL or the content names
// it.
func TestTemplateNameGenericReserved(t *testing.T) {
	t.Parallel()
	b := setupTemplatesAPI(t)
	for _, c := range []struct{ path, content string }{
		{"/templates/generic", strings.ReplaceAll(apiTemplate, "name: acme-po", "name: generic")},
		{"/templates/generic", strings.ReplaceAll(apiTemplate, "  name: acme-po\n", "")}, // named after the file
	} {
		r := b.do(t, b.req(t, http.MethodPut, c.path, "tok-acme", "application/yaml", []byte(c.content)))
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.raw))
		require.Equal(t, "template_name_reserved", r.body["code"], string(r.raw))
	}
	_, err := b.st.Template(t.Context(), "acme", "generic")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err), "nothing stored")
}
