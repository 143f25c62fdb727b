package ingest_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

func TestOpsTemplatesAndReprocess(t *testing.T) {
	t.Parallel()
	b := setupOps(t, opsToken)
	ctx := t.Context()
	r, err := b.st.PushTemplate(ctx, store.TemplatePush{Name: "contoso-po", Filename: "contoso-po.yml", Content: []byte("v1"),
		PartyIDs: []string{"CONTOSO"}, PushedBy: "ops"})
	require.NoError(t, err)
	require.Equal(t, 1, r.Version)
	_, err = b.st.PushTemplate(ctx, store.TemplatePush{Name: "private", ClientID: "acme", Filename: "private.yml",
		Content: []byte("p"), PushedBy: "ops"})
	require.NoError(t, err)
	require.NoError(t, b.st.SetTemplateEnabled(ctx, "acme", "private", false))
	ti, err := b.st.Template(ctx, "", "contoso-po")
	require.NoError(t, err)

	// Two documents processed with v1: one failed (dlq), one rejected.
	pin := func(d document.Document) {
		_, _, err := b.st.PinAttempt(ctx, d.ID, store.AttemptTemplate{Attempt: 1, TemplateID: ti.ID, Name: "contoso-po",
			Version: 1, SHA256: ti.SHA256}, d.State, "processor")
		require.NoError(t, err)
	}
	failed := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-failed")
	pin(failed)
	rejected := dlqDocument(t, b.st, b.qcfg.SubjectPrefix, "m-rejected")
	pin(rejected)
	_, err = b.st.Transition(ctx, store.Change{DocumentID: rejected.ID, From: document.StateDLQ, To: document.StateFinishedWithFailure, Actor: "test"})
	require.NoError(t, err)

	page := readBody(t, opsRequest(t, "GET", b.url+"/ops/templates", opsToken, nil))
	require.Contains(t, page, `data-name="contoso-po"`)
	require.Contains(t, page, "CONTOSO")
	require.Contains(t, page, "v1: 0 success · 0 rejected · 0 ignored · 2 failed")
	require.Contains(t, page, `data-name="private"`)
	require.Contains(t, page, "client acme")
	require.Contains(t, page, "disabled")

	// The document page shows the version per attempt and a reprocess
	// button; reprocessing is an event with the operator as actor.
	detail := readBody(t, opsRequest(t, "GET", b.url+"/ops/documents/"+failed.LogID, opsToken, nil))
	require.Contains(t, detail, `id="attempts"`)
	require.Contains(t, detail, "<td>contoso-po</td><td class=\"num\">v1</td>")
	require.Contains(t, detail, `id="reprocess"`)
	res := opsRequest(t, "POST", b.url+"/ops/documents/"+failed.LogID+"/reprocess", opsToken, url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ops/documents/"+failed.LogID+"?done=reprocessed", res.Header.Get("Location"))
	got, err := b.st.Document(ctx, failed.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateReceived, got.State)
	n, err := b.st.CurrentAttempt(ctx, failed.ID)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	ev, err := b.st.Events(ctx, failed.ID)
	require.NoError(t, err)
	require.Equal(t, "operator:ops-console", ev[len(ev)-1].Actor)
	require.Equal(t, "reprocessed with the current template version", ev[len(ev)-1].Detail)
	// A document being processed has no button, and a forged POST is a
	// conflict.
	detail = readBody(t, opsRequest(t, "GET", b.url+"/ops/documents/"+failed.LogID, opsToken, nil))
	require.NotContains(t, detail, `id="reprocess"`)
	res = opsRequest(t, "POST", b.url+"/ops/documents/"+failed.LogID+"/reprocess", opsToken, url.Values{})
	require.Equal(t, http.StatusConflict, res.StatusCode)
}
