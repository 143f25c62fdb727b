package ingest_test

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// An upload naming neither template nor party_id is 422 by default, as the
// contract says (both variants); a client with route_unaddressed gets 202
// and a document without a template, which the processor routes, with the
// reason in its history; the document details show the template once one
// is chosen and nothing before.
func TestUploadUnaddressed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.st.SetRouteUnaddressed(t.Context(), "globex", true))
	multipart := func(token, messageID string, kv ...string) response {
		return b.do(t, b.multipart(t, token, form{fields: fields(append([]string{"message_id", messageID, "subject", "PO"}, kv...)...), file: orderPDF}))
	}
	jsonUpload := func(token, messageID string) response {
		return b.do(t, b.jsonReq(t, token, map[string]any{"message_id": messageID, "subject": "PO",
			"file_base64": base64.StdEncoding.EncodeToString(orderPDF)}))
	}

	for _, res := range []response{multipart("tok-acme", "u-1"), jsonUpload("tok-acme", "u-2")} {
		require.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.raw))
		require.Equal(t, "validation_failed", res.body["code"], string(res.raw))
	}

	for _, res := range []response{multipart("tok-globex", "u-1"), jsonUpload("tok-globex", "u-2")} {
		require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
		logID := res.body["log_id"].(string)
		d, err := b.st.DocumentByLogID(t.Context(), "globex", logID)
		require.NoError(t, err)
		require.Empty(t, d.Template, "the processor chooses")
		require.Empty(t, d.PartyID)
		ev, err := b.st.Events(t.Context(), d.ID)
		require.NoError(t, err)
		require.Equal(t, "route pending: no template or party_id; the processor chooses the template by keywords", ev[0].Detail)
		details := b.get(t, "tok-globex", logID)
		require.Equal(t, http.StatusOK, details.status)
		require.NotContains(t, details.body, "template")
	}

	// Both given stays 422; one given is not routed.
	res := multipart("tok-globex", "u-3", "template", "contoso-po", "party_id", "CONTOSO")
	require.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.raw))
	res = multipart("tok-globex", "u-4", "party_id", "CONTOSO")
	require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
	require.Equal(t, "contoso-po", b.get(t, "tok-globex", res.body["log_id"].(string)).body["template"])
}
