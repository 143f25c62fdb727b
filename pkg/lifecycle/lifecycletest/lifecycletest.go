// Package lifecycletest puts documents where the processor would leave
// them, for tests of the review actions outside the processor's module.
package lifecycletest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// Process does what ingest and the processor do with an upload of pdf by
// clientID for the global template name: the source object, the document,
// the attempt pinned to the current version, the run (text reads the PDF).
// A success is stored with its result JSON; a fixable rejection is held
// for review with its reading (the client must hold for review).
func Process(t testing.TB, st *store.Store, objs objectstore.Store, text catalogue.TextFunc, clientID, name string, pdf []byte) document.Document {
	t.Helper()
	ctx := t.Context()
	sum := sha256.Sum256(pdf)
	logID := uuid.NewString()
	d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: logID, ClientID: clientID, MessageID: "m-" + logID,
		FileSHA256: sum[:], FileSize: int64(len(pdf)), Filename: "po.pdf", Template: name,
		SourceKey: "sources/" + logID + ".pdf", SourcePath: "file:///sources/" + logID + ".pdf"}
	require.NoError(t, objs.Put(ctx, d.SourceKey, bytes.NewReader(pdf), int64(len(pdf)), "application/pdf"))
	d, _, err := st.CreateDocument(ctx, d, lifecycle.ProcessJob(ctx, "intake", d, 1))
	require.NoError(t, err)
	info, err := st.Template(ctx, "", name)
	require.NoError(t, err)
	_, _, err = st.PinAttempt(ctx, d.ID, store.AttemptTemplate{Attempt: 1, TemplateID: info.ID, Name: name,
		Version: info.Version, SHA256: info.SHA256}, d.State, "processor")
	require.NoError(t, err)
	run := runVersion(t, st, text, d, name, info.Version, pdf)
	res := resultjson.File{LogID: d.LogID, MessageID: d.MessageID, Template: name, TemplateVersion: info.Version,
		TemplateSHA256: hex.EncodeToString(info.SHA256), Order: resultjson.OrderOf(run.Order)}
	if run.Outcome.Status == template.OutcomeSuccess {
		return succeed(t, st, objs, d, res)
	}
	require.True(t, run.Outcome.Reason.Fixable(), run.Outcome.String())
	require.NoError(t, lifecycle.PutReading(ctx, objs, d, lifecycle.Reading{Reason: run.Outcome.Reason,
		Detail: run.Outcome.Detail, Canonical: *run.Order, Result: res}))
	r := run.Outcome.Reason
	d, err = st.HoldForReview(ctx, store.Change{DocumentID: d.ID, From: d.State, To: document.StateProcessedRejected,
		Reason: &r, Actor: "processor", Detail: run.Outcome.Detail + "; held for review"}, time.Now().Add(time.Hour))
	require.NoError(t, err)
	return d
}

// runVersion reads pdf with version n of template name, as the processor
// does.
func runVersion(t testing.TB, st *store.Store, text catalogue.TextFunc, d document.Document, name string, n int, pdf []byte) *template.Run {
	t.Helper()
	v, err := st.TemplateVersion(t.Context(), "", name, n)
	require.NoError(t, err)
	tpl, err := catalogue.CompileVersion(name, v.Filename, v.Content)
	require.NoError(t, err)
	set, err := template.NewSet(tpl)
	require.NoError(t, err)
	txt, err := text(t.Context(), "po.pdf", pdf)
	require.NoError(t, err)
	run, err := set.Run(t.Context(), txt, template.RunOptions{Template: name, Mapper: mapper{st, d.ClientID},
		Mode: d.ResultMode, ReceivedAt: d.CreatedAt})
	require.NoError(t, err)
	require.NotNil(t, run.Order)
	return run
}

// succeed stores res as d's success, as the processor's success
// transition does.
func succeed(t testing.TB, st *store.Store, objs objectstore.Store, d document.Document, res resultjson.File) document.Document {
	t.Helper()
	b, err := json.Marshal(res)
	require.NoError(t, err)
	xmlKey, jsonKey := objectstore.ResultKey(d.LogID, d.CreatedAt, "xml"), objectstore.ResultKey(d.LogID, d.CreatedAt, "json")
	require.NoError(t, objs.Put(t.Context(), jsonKey, bytes.NewReader(b), int64(len(b)), "application/json"))
	require.NoError(t, objs.Put(t.Context(), xmlKey, strings.NewReader("<ORDER/>"), 8, "application/xml"))
	xmlURI, jsonURI := objs.URI(xmlKey), objs.URI(jsonKey)
	d, err = st.Transition(t.Context(), store.Change{DocumentID: d.ID, From: d.State, To: document.StateProcessedSuccess,
		Actor: "processor", ResultKey: &xmlKey, ResultPath: &xmlURI, ResultJSONKey: &jsonKey, ResultJSONPath: &jsonURI})
	require.NoError(t, err)
	return d
}

type mapper struct {
	st     *store.Store
	client string
}

func (m mapper) Lookup(ctx context.Context, kind, key string) (string, bool, error) {
	return m.st.LookupMapping(ctx, m.client, kind, key)
}
