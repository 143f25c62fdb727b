package intake_test

import (
	"bytes"
	"crypto/sha256"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

// templates resolves names and party ids from maps, as the catalogue does
// for one client's enabled templates.
type templates struct{ names, parties map[string]string }

func (t templates) Resolve(_, name, partyID string) (string, bool) {
	if name != "" {
		n, ok := t.names[name]
		return n, ok
	}
	n, ok := t.parties[partyID]
	return n, ok
}

type fixture struct {
	svc  *intake.Service
	dir  string
	acme document.Client
}

func setup(t *testing.T) fixture {
	t.Helper()
	st := storetest.Store(t)
	acme := document.Client{ID: "acme", Name: "ACME"}
	require.NoError(t, st.UpsertClient(t.Context(), acme))
	dir := t.TempDir()
	objs, err := objectstore.NewFS(dir)
	require.NoError(t, err)
	tm := templates{names: map[string]string{"po": "po"}, parties: map[string]string{"BUYER": "po"}}
	return fixture{svc: &intake.Service{Store: st, Objects: objs, Templates: tm, SubjectPrefix: "intake-test"}, dir: dir, acme: acme}
}

func pdf(body string, large bool) intake.PDF {
	b := []byte("%PDF-1.4\n" + body)
	sum := sha256.Sum256(b)
	return intake.PDF{Body: bytes.NewReader(b), Size: int64(len(b)), SHA256: sum[:], Head: b[:min(len(b), 8)], Large: large}
}

func (f fixture) sub(messageID, body string) intake.Submission {
	return intake.Submission{Client: f.acme, MessageID: messageID, Subject: "PO", Template: "po", Filename: "po.pdf", PDF: pdf(body, false)}
}

// objects lists the files the object store holds.
func (f fixture) objects(t *testing.T) []string {
	var out []string
	require.NoError(t, filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	}))
	return out
}

func code(err error) string {
	if e, ok := document.AsError(err); ok {
		return e.Code
	}
	return ""
}

// A submission is stored and recorded; the same message id with the same
// file is answered with that document, with another file refused, and
// neither leaves a second object behind.
func TestSubmitAndReplay(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	first, err := f.svc.Submit(ctx, f.sub("m-1", "one"))
	require.NoError(t, err)
	require.True(t, first.Created)
	require.Equal(t, document.StateReceived, first.Document.State)
	require.Equal(t, "po", first.Document.Template)
	require.Len(t, f.objects(t), 1)

	for _, large := range []bool{false, true} {
		s := f.sub("m-1", "one")
		s.PDF = pdf("one", large)
		again, err := f.svc.Submit(ctx, s)
		require.NoError(t, err)
		require.False(t, again.Created)
		require.Equal(t, first.Document.LogID, again.Document.LogID)
	}
	_, err = f.svc.Submit(ctx, f.sub("m-1", "two"))
	require.Equal(t, intake.CodeDuplicateMessageID, code(err), "%v", err)
	require.Len(t, f.objects(t), 1, "no object is left for a refused or replayed submission")
}

// What the contract refuses: a file that is not a PDF, a template or party
// the client has none for. A party unknown to a client that reads new
// buyers generically goes to the generic reader.
func TestSubmitRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	s := f.sub("m-1", "x")
	s.PDF.Head = []byte("GIF89a")
	_, err := f.svc.Submit(ctx, s)
	require.Equal(t, intake.CodeNotPDF, code(err))

	s = f.sub("m-2", "x")
	s.Template = "nope"
	_, err = f.svc.Submit(ctx, s)
	require.Equal(t, intake.CodeTemplateNotFound, code(err))
	require.ErrorContains(t, err, `template "nope"`)

	s = f.sub("m-3", "x")
	s.Template, s.PartyID = "", "NEW-BUYER"
	_, err = f.svc.Submit(ctx, s)
	require.Equal(t, intake.CodeTemplateNotFound, code(err))
	require.ErrorContains(t, err, `party_id "NEW-BUYER"`)
	require.Empty(t, f.objects(t))

	s.Client.UnknownParty = document.UnknownPartyGeneric
	r, err := f.svc.Submit(ctx, s)
	require.NoError(t, err)
	require.Equal(t, generic.Name, r.Document.Template)
	require.Equal(t, "NEW-BUYER", r.Document.PartyID)
}

// A retry is answered with its document even after its template was
// removed.
func TestReplayAfterTemplateRemoved(t *testing.T) {
	t.Parallel()
	f := setup(t)
	first, err := f.svc.Submit(t.Context(), f.sub("m-1", "one"))
	require.NoError(t, err)
	f.svc.Templates = templates{}
	again, err := f.svc.Submit(t.Context(), f.sub("m-1", "one"))
	require.NoError(t, err)
	require.Equal(t, first.Document.LogID, again.Document.LogID)
}

// Identical submissions at the same moment make one document; every
// submission is answered with it and one object remains.
func TestConcurrentIdenticalSubmissions(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const n = 8
	var wg sync.WaitGroup
	receipts := make([]intake.Receipt, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			receipts[i], errs[i] = f.svc.Submit(t.Context(), f.sub("m-1", "same"))
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, receipts[0].Document.LogID, receipts[i].Document.LogID)
		if receipts[i].Created {
			created++
		}
	}
	require.Equal(t, 1, created)
	require.Len(t, f.objects(t), 1)
}
