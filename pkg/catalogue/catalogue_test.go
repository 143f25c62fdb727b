package catalogue_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// tpl is a minimal valid template named name claiming party ids.
func tpl(name, keyword string, party ...string) string {
	y := fmt.Sprintf("issuer: %s\nkeywords: [%q]\nfields:\n  order_id:\n    parser: regex\n    regex: 'PO (\\d+)'\ndocintake:\n  name: %s\n",
		name, keyword, name)
	if len(party) > 0 {
		y += "  party_ids:\n"
		for _, p := range party {
			y += fmt.Sprintf("    - %q\n", p)
		}
	}
	return y
}

func pushed(t *testing.T, st *store.Store, client, content string) int {
	t.Helper()
	p, err := pushFrom(t, content)
	require.NoError(t, err)
	p.ClientID, p.PushedBy = client, "test"
	r, err := st.PushTemplate(t.Context(), p)
	require.NoError(t, err)
	return r.Version
}

func pushFrom(t *testing.T, content string) (store.TemplatePush, error) {
	f := filepath.Join(t.TempDir(), "x.yml")
	require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
	return catalogue.ReadTemplateFile(f)
}

// waitFor polls cond until it returns nil or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("condition not met within %s: %v", d, err)
}

func resolves(tm *catalogue.Catalogue, client, name, party, want string) func() error {
	return func() error {
		got, ok := tm.Resolve(client, name, party)
		if want == "" && ok {
			return fmt.Errorf("%s/%s/%s resolves to %s, want none", client, name, party, got)
		}
		if want != "" && (!ok || got != want) {
			return fmt.Errorf("%s/%s/%s resolves to %q (%t), want %s", client, name, party, got, ok, want)
		}
		return nil
	}
}

func setupCatalogue(t *testing.T, dirs ...string) (*store.Store, *catalogue.Catalogue) {
	t.Helper()
	st := storetest.Store(t)
	for _, c := range []string{"acme", "globex"} {
		require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: c, Name: c}))
	}
	tm, err := catalogue.Open(t.Context(), st, zaptest.NewLogger(t), catalogue.Options{Dirs: dirs,
		// Only notifications can make the 2 s deadlines below.
		Recheck: time.Hour})
	require.NoError(t, err)
	t.Cleanup(tm.Close)
	return st, tm
}

// A push, a disable and an enable are served within 2 s, from the
// notification alone (the periodic re-check is an hour here).
func TestCatalogueLive(t *testing.T) {
	t.Parallel()
	st, tm := setupCatalogue(t)
	require.NoError(t, resolves(tm, "acme", "po", "", "")())

	pushed(t, st, "", tpl("po", "ACME PO", "4711"))
	waitFor(t, 2*time.Second, resolves(tm, "acme", "po", "", "po"))
	require.NoError(t, resolves(tm, "globex", "", "4711", "po")())

	require.NoError(t, st.SetTemplateEnabled(t.Context(), "", "po", false))
	waitFor(t, 2*time.Second, resolves(tm, "acme", "po", "", ""))
	require.NoError(t, resolves(tm, "acme", "", "4711", "")())
	require.NoError(t, st.SetTemplateEnabled(t.Context(), "", "po", true))
	waitFor(t, 2*time.Second, resolves(tm, "acme", "", "4711", "po"))

	// v2 replaces v1 in the served catalogue.
	pushed(t, st, "", tpl("po", "ACME PURCHASE ORDER", "4711"))
	waitFor(t, 2*time.Second, func() error {
		if v, _ := tm.Current("acme", "po"); v.Number != 2 {
			return fmt.Errorf("serving v%d", v.Number)
		}
		return nil
	})
}

// A client's own template wins for that client over a global one with the
// same name or party id, and is invisible to every other client.
func TestCatalogueClientScope(t *testing.T) {
	t.Parallel()
	st, tm := setupCatalogue(t)
	pushed(t, st, "", tpl("po", "global", "4711"))
	pushed(t, st, "acme", tpl("po", "acme", "4711"))
	pushed(t, st, "acme", tpl("acme-only", "acme only", "9999"))
	waitFor(t, 2*time.Second, resolves(tm, "acme", "acme-only", "", "acme-only"))

	v, ok := tm.Current("acme", "po")
	require.True(t, ok)
	require.Equal(t, "acme", v.ClientID)
	v, ok = tm.Current("globex", "po")
	require.True(t, ok)
	require.Equal(t, "", v.ClientID)
	require.NoError(t, resolves(tm, "globex", "acme-only", "", "")())
	require.NoError(t, resolves(tm, "globex", "", "9999", "")())
	require.NoError(t, resolves(tm, "acme", "", "9999", "acme-only")())
}

// INTAKE_TEMPLATES_DIR is synced at start: a new or changed file is a new
// global version, an unchanged one is not. A file that does not load is
// reported and left out, and the others are served.
func TestSyncTemplatesDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := "keywords: [x]\nfields:\n  order_id:\n    parser: regex\n    regex: '('\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "po.yml"), []byte(tpl("po", "PO")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yml"), []byte(bad), 0o600))
	st, tm := setupCatalogue(t, dir) // starts with the bad file there
	require.NoError(t, resolves(tm, "acme", "po", "", "po")())
	require.NoError(t, resolves(tm, "acme", "bad", "", "")())
	require.NoError(t, os.Remove(filepath.Join(dir, "bad.yml")))

	changed, skipped, err := catalogue.SyncDir(t.Context(), st, dir)
	require.NoError(t, err)
	require.Empty(t, changed)
	require.Empty(t, skipped)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "po.yml"), []byte(tpl("po", "PO 2")), 0o600))
	changed, skipped, err = catalogue.SyncDir(t.Context(), st, dir)
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.Equal(t, []string{"po v2"}, changed)
	h, err := st.TemplateHistory(t.Context(), "", "po")
	require.NoError(t, err)
	require.Len(t, h, 2)
	require.Equal(t, "from INTAKE_TEMPLATES_DIR", h[1].Comment)
	require.Equal(t, catalogue.DirActor, h[1].PushedBy)

	// A bad template is reported with file, line and key and left out; the
	// good file beside it is stored and served.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yml"), []byte(bad), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "po.yml"), []byte(tpl("po", "PO 3")), 0o600))
	changed, skipped, err = catalogue.SyncDir(t.Context(), st, dir)
	require.NoError(t, err)
	require.Equal(t, []string{"po v3"}, changed)
	require.Len(t, skipped, 1)
	require.ErrorContains(t, skipped[0], filepath.Join(dir, "bad.yml")+": not synced: "+filepath.Join(dir, "bad.yml")+":5: fields.order_id.regex")
	waitFor(t, 2*time.Second, func() error {
		if v, _ := tm.Current("acme", "po"); v.Number != 3 {
			return fmt.Errorf("serving po v%d", v.Number)
		}
		return nil
	})

	// A name claimed by two files leaves both out (neither may silently
	// win; v3 keeps serving), the other files are stored; a samples folder
	// is skipped.
	require.NoError(t, os.Remove(filepath.Join(dir, "bad.yml")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "po.yml"), []byte(tpl("po", "PO 4")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "po-copy.yml"), []byte(tpl("po", "PO 5")), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.yml"), []byte(tpl("other", "OTHER")), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "po.samples"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "po.samples", "x.json"), []byte("[]"), 0o600))
	changed, skipped, err = catalogue.SyncDir(t.Context(), st, dir)
	require.NoError(t, err)
	require.Equal(t, []string{"other v1"}, changed)
	require.Len(t, skipped, 2)
	require.ErrorContains(t, skipped[0], filepath.Join(dir, "po-copy.yml")+`: not synced: name "po" is also claimed by `+filepath.Join(dir, "po.yml"))
	require.ErrorContains(t, skipped[1], filepath.Join(dir, "po.yml")+`: not synced: name "po" is also claimed by `+filepath.Join(dir, "po-copy.yml"))
	h, err = st.TemplateHistory(t.Context(), "", "po")
	require.NoError(t, err)
	require.Len(t, h, 3, "nothing stored for po")
	require.NoError(t, os.Remove(filepath.Join(dir, "po-copy.yml")))
	changed, skipped, err = catalogue.SyncDir(t.Context(), st, dir)
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.Equal(t, []string{"po v4"}, changed)

	// A party id a stored template holds is the file's problem too.
	pushed(t, st, "", tpl("holder", "HOLDER", "4711"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "claim.yml"), []byte(tpl("claim", "CLAIM", "4711")), 0o600))
	changed, skipped, err = catalogue.SyncDir(t.Context(), st, dir)
	require.NoError(t, err)
	require.Empty(t, changed)
	require.Len(t, skipped, 1)
	require.ErrorContains(t, skipped[0], filepath.Join(dir, "claim.yml")+": not synced: ")
}

// Pin: an attempt keeps the version it started with, whatever is pushed
// meanwhile; a template that is not served is ErrTemplateUnavailable.
func TestCataloguePin(t *testing.T) {
	t.Parallel()
	st, tm := setupCatalogue(t)
	pushed(t, st, "", tpl("po", "PO"))
	waitFor(t, 2*time.Second, resolves(tm, "acme", "po", "", "po"))
	d := document.Document{ID: "0195f0a4-0000-7000-8000-000000000001", LogID: "l1", ClientID: "acme", MessageID: "m1",
		FileSHA256: make([]byte, 32), Filename: "a.pdf", Subject: "s", Template: "po", SourceKey: "k", SourcePath: "s3://b/k"}
	_, _, err := st.CreateDocument(t.Context(), d, store.OutboxRow{Subject: "x", MsgID: "x", Payload: []byte("x")})
	require.NoError(t, err)
	d.State = document.StateReceived

	v, pin, err := tm.PinAttempt(t.Context(), d, 1, "processor")
	require.NoError(t, err)
	require.Equal(t, 1, v.Number)
	require.Equal(t, 1, pin.Attempt)

	pushed(t, st, "", tpl("po", "PO v2"))
	waitFor(t, 2*time.Second, func() error {
		if v, _ := tm.Current("acme", "po"); v.Number != 2 {
			return errors.New("v2 not live")
		}
		return nil
	})
	v, _, err = tm.PinAttempt(t.Context(), d, 1, "processor")
	require.NoError(t, err)
	require.Equal(t, 1, v.Number, "the attempt stays on the version it started with")
	require.Equal(t, "PO", v.Template.Keywords[0].Source)

	other := d
	other.ID, other.LogID, other.MessageID, other.Template = "0195f0a4-0000-7000-8000-000000000002", "l2", "m2", "nope"
	other.SourceKey, other.SourcePath = "k2", "s3://b/k2"
	_, _, err = st.CreateDocument(t.Context(), other, store.OutboxRow{Subject: "x", MsgID: "y", Payload: []byte("x")})
	require.NoError(t, err)
	_, _, err = tm.PinAttempt(t.Context(), other, 1, "processor")
	require.ErrorIs(t, err, catalogue.ErrTemplateUnavailable)
}

// A names-only catalogue (the ingest API's) resolves by name and party id
// from the store's rows without compiling a pattern: a stored version its
// engine could not compile still resolves there, while a compiling
// catalogue leaves it out; and it serves no compiled version.
func TestNamesOnlyCompilesNothing(t *testing.T) {
	t.Parallel()
	st, full := setupCatalogue(t)
	pushed(t, st, "acme", tpl("po", "ACME PO", "4711"))
	// Stored by an older release whose engine took it (the store does not
	// compile): this engine wants at least one keyword.
	broken := strings.Replace(tpl("bad", "BAD PO", "4712"), `keywords: ["BAD PO"]`, `keywords: []`, 1)
	require.NotEqual(t, tpl("bad", "BAD PO", "4712"), broken)
	_, err := st.PushTemplate(t.Context(), store.TemplatePush{Name: "bad", ClientID: "acme", Filename: "bad.yml",
		Content: []byte(broken), PartyIDs: []string{"4712"}, PushedBy: "test"})
	require.NoError(t, err)
	require.NoError(t, full.Reload(t.Context()))
	require.NoError(t, resolves(full, "acme", "bad", "", "")(), "a version that does not compile is not served")

	names, err := catalogue.Open(t.Context(), st, zaptest.NewLogger(t), catalogue.Options{Recheck: -1, NamesOnly: true})
	require.NoError(t, err)
	t.Cleanup(names.Close)
	for _, c := range [][4]string{{"acme", "po", "", "po"}, {"acme", "", "4711", "po"}, {"acme", "bad", "", "bad"},
		{"acme", "", "4712", "bad"}, {"globex", "po", "", ""}} {
		require.NoError(t, resolves(names, c[0], c[1], c[2], c[3])())
	}
	_, ok := names.Current("acme", "po")
	require.False(t, ok, "nothing compiled to serve")
}
