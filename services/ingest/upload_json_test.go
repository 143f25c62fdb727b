package ingest_test

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A JSON upload whose keys could be read two ways is refused (422
// validation_failed, nothing stored): encoding/json would keep the last of
// duplicate keys and match Message_ID to message_id, so a proxy or the
// client's own log could see another message_id than the one stored.
func TestJSONDuplicateAndCaseFoldedKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pdf := `"` + base64.StdEncoding.EncodeToString(orderPDF) + `"`
	rest := `"file_base64":` + pdf + `,"template":"contoso-po","subject":"s"`
	for _, c := range []struct {
		name, body, field, problem string
	}{
		{"duplicate field", `{"message_id":"a","message_id":"b",` + rest + `}`,
			"message_id", "is given more than once"},
		{"duplicate spelled with an escape", `{"message_id":"a",` + rest + `,"templat\u0065":"other"}`,
			"template", "is given more than once"},
		{"duplicate null then value", `{"message_id":null,"message_id":"b",` + rest + `}`,
			"message_id", "is given more than once"},
		{"duplicate unknown key", `{"message_id":"a",` + rest + `,"x":1,"x":2}`,
			"body", "has a key given more than once"},
		{"field in another case next to it", `{"message_id":"a","Message_ID":"b",` + rest + `}`,
			"message_id", `is spelled "Message_ID"; keys are case-sensitive`},
		{"field only in another case", `{"MESSAGE_ID":"a",` + rest + `}`,
			"message_id", `is spelled "MESSAGE_ID"; keys are case-sensitive`},
		{"field in Unicode case folding", `{"message_id":"a","file_base64":` + pdf + `,"template":"contoso-po","\u017fubject":"s"}`,
			"subject", "is spelled \"\u017fubject\"; keys are case-sensitive"},
	} {
		res := b.do(t, b.jsonReq(t, "tok-acme", c.body))
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", c.name, res.raw)
		require.Equal(t, "validation_failed", res.body["code"], c.name)
		require.Equal(t, map[string]any{c.field: c.problem}, res.body["details"], c.name)
	}
	var n int
	require.NoError(t, b.st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM documents`).Scan(&n))
	require.Zero(t, n, "no refused upload was stored")

	// Keys that are no field at all are still ignored.
	res := b.do(t, b.jsonReq(t, "tok-acme", `{"message_id":"ok-1",`+rest+`,"comment":{"any":["thing"]}}`))
	require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
}
