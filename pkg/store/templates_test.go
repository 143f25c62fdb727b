package store_test

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/stretchr/testify/require"
)

func push(name, client, content string, party ...string) store.TemplatePush {
	return store.TemplatePush{Name: name, ClientID: client, Filename: name + ".yml", Content: []byte(content),
		PartyIDs: party, PushedBy: "test", Comment: "c"}
}

func TestTemplateVersions(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)

	r, err := s.PushTemplate(ctx, push("po", "", "v1", "P1"))
	require.NoError(t, err)
	require.Equal(t, store.PushResult{Version: 1, Changed: true}, r)
	// The same content again stores nothing.
	r, err = s.PushTemplate(ctx, push("po", "", "v1", "P1"))
	require.NoError(t, err)
	require.Equal(t, store.PushResult{Version: 1, Changed: false}, r)
	// New samples alone make a new version.
	p := push("po", "", "v1", "P1")
	p.Samples = []store.TemplateSample{{Name: "a.json", Content: []byte("[]")}, {Name: "a.txt", Content: []byte("x")}}
	r, err = s.PushTemplate(ctx, p)
	require.NoError(t, err)
	require.Equal(t, 2, r.Version)
	p.Content, p.Forced = []byte("v3"), true
	r, err = s.PushTemplate(ctx, p)
	require.NoError(t, err)
	require.Equal(t, store.PushResult{Version: 3, Changed: true}, r)

	v, err := s.TemplateVersion(ctx, "", "po", 0)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte("v3"))
	require.Equal(t, 3, v.Version)
	require.Equal(t, sum[:], v.SHA256)
	require.True(t, v.Forced)
	require.Len(t, v.Samples, 2)
	require.Equal(t, "a.json", v.Samples[0].Name)
	// What the catalogue compiles from: the same version, samples left out.
	src, err := s.TemplateSource(ctx, v.TemplateID, 3)
	require.NoError(t, err)
	require.Equal(t, "v3", string(src.Content))
	require.Equal(t, sum[:], src.SHA256)
	require.Empty(t, src.Samples)

	// Rollback stores v1's content as v4; history only grows.
	r, err = s.RollbackTemplate(ctx, "", "po", 1, "", "ops")
	require.NoError(t, err)
	require.Equal(t, 4, r.Version)
	h, err := s.TemplateHistory(ctx, "", "po")
	require.NoError(t, err)
	require.Len(t, h, 4)
	require.Equal(t, "v1", string(h[3].Content))
	require.Equal(t, "rollback to v1", h[3].Comment)
	require.Empty(t, h[3].Samples)

	// Versions are immutable, also for SQL run by hand.
	_, err = s.Pool().Exec(ctx, `UPDATE template_versions SET content = 'x' WHERE version = 1`)
	require.ErrorContains(t, err, "immutable")

	_, err = s.TemplateVersion(ctx, "", "po", 9)
	require.Equal(t, store.CodeTemplateNotFound, errCode(err))
	_, err = s.TemplateVersion(ctx, "acme", "po", 0)
	require.Equal(t, store.CodeTemplateNotFound, errCode(err))
}

func errCode(err error) string {
	if e, ok := document.AsError(err); ok {
		return e.Code
	}
	return ""
}

func TestTemplateScopesAndPartyIDs(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.PushTemplate(ctx, push("po", "", "global", "P1"))
	require.NoError(t, err)
	// Another global template cannot claim P1 ...
	_, err = s.PushTemplate(ctx, push("other", "", "x", "P1"))
	require.Equal(t, store.CodeTemplateConflict, errCode(err))
	// ... a client's own template can (it wins for that client), even with
	// the same name.
	_, err = s.PushTemplate(ctx, push("po", "acme", "acme's", "P1"))
	require.NoError(t, err)

	list, err := s.ListTemplates(ctx, store.TemplatesFilter{ClientID: "acme"})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "", list[0].ClientID)
	require.Equal(t, "acme", list[1].ClientID)
	list, err = s.ListTemplates(ctx, store.TemplatesFilter{ClientID: "globex"})
	require.NoError(t, err)
	require.Len(t, list, 1)
	list, err = s.ListTemplates(ctx, store.TemplatesFilter{ClientID: "acme", OnlyClient: true})
	require.NoError(t, err)
	require.Len(t, list, 1)

	require.NoError(t, s.SetTemplateEnabled(ctx, "acme", "po", false))
	ti, err := s.Template(ctx, "acme", "po")
	require.NoError(t, err)
	require.False(t, ti.Enabled)
	require.Equal(t, store.CodeTemplateNotFound, errCode(s.SetTemplateEnabled(ctx, "globex", "po", false)))

	// Delete hides; a push revives with the next version.
	require.NoError(t, s.DeleteTemplate(ctx, "acme", "po"))
	_, err = s.Template(ctx, "acme", "po")
	require.Equal(t, store.CodeTemplateNotFound, errCode(err))
	zero := 0
	p := push("po", "acme", "acme's", "P1")
	p.IfVersion = &zero
	r, err := s.PushTemplate(ctx, p)
	require.NoError(t, err)
	require.Equal(t, store.PushResult{Version: 2, Changed: true}, r)
	// Optimistic concurrency: a push based on an old version loses.
	p.Content = []byte("acme's v3")
	_, err = s.PushTemplate(ctx, p)
	require.Equal(t, store.CodeTemplateConflict, errCode(err))
	two := 2
	p.IfVersion = &two
	_, err = s.PushTemplate(ctx, p)
	require.NoError(t, err)
}

func TestTemplatePushRace(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			<-start
			_, err := s.PushTemplate(ctx, push("po", "", string(rune('a'+i))))
			require.NoError(t, err)
		})
	}
	close(start)
	wg.Wait()
	h, err := s.TemplateHistory(ctx, "", "po")
	require.NoError(t, err)
	require.Len(t, h, 8)
	for i, v := range h {
		require.Equal(t, i+1, v.Version)
	}
}

func TestListenTemplates(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	ready, changed := make(chan struct{}), make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		done <- s.ListenTemplates(ctx, func() { close(ready) }, func() { changed <- struct{}{} })
	}()
	<-ready
	_, err := s.PushTemplate(ctx, push("po", "", "v1"))
	require.NoError(t, err)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification after a push")
	}
	require.NoError(t, s.SetTemplateEnabled(ctx, "", "po", false))
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification after disable")
	}
}

func TestPinAttempt(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m1", "pdf")
	_, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	_, err = s.PushTemplate(ctx, push("contoso-po", "", "v1"))
	require.NoError(t, err)
	ti, err := s.Template(ctx, "", "contoso-po")
	require.NoError(t, err)
	n, err := s.CurrentAttempt(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	want := store.AttemptTemplate{Attempt: 1, TemplateID: ti.ID, Name: "contoso-po", Version: 1, SHA256: ti.SHA256}
	// Concurrent pins agree on one version.
	var wg sync.WaitGroup
	pins := make([]store.AttemptTemplate, 6)
	created := make([]bool, 6)
	for i := range pins {
		w := want
		w.Version = 1 + i%2 // half of them ask for another version
		wg.Go(func() {
			var err error
			pins[i], created[i], err = s.PinAttempt(ctx, d.ID, w, document.StateReceived, "processor")
			require.NoError(t, err)
		})
	}
	wg.Wait()
	nCreated := 0
	for i := range pins {
		require.Equal(t, pins[0].Version, pins[i].Version)
		if created[i] {
			nCreated++
		}
	}
	require.Equal(t, 1, nCreated)
	atts, err := s.Attempts(ctx, d.ID)
	require.NoError(t, err)
	require.Len(t, atts, 1)
	ev, err := s.Events(ctx, d.ID)
	require.NoError(t, err)
	require.Contains(t, ev[len(ev)-1].Detail, "template contoso-po v")
	ti, err = s.Template(ctx, "", "contoso-po")
	require.NoError(t, err)
	require.NotNil(t, ti.LastUsedAt)
	// Every pin call is a worker starting the attempt: six so far, one
	// event (the pin) however many starts.
	starts, err := s.AttemptStarts(ctx, d.ID, 1)
	require.NoError(t, err)
	require.Equal(t, 6, starts)
	starts, err = s.AttemptStarts(ctx, d.ID, 2)
	require.NoError(t, err)
	require.Zero(t, starts, "attempt 2 never started")
	pinEvents := 0
	for _, e := range ev {
		if strings.Contains(e.Detail, "template contoso-po v") {
			pinEvents++
		}
	}
	require.Equal(t, 1, pinEvents)
}

// The pin keeps what the pinned version said about feedback on ignored
// documents; a document whose attempt never started has no template that
// could have ignored it.
func TestIgnoredFeedbackFromPin(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	_, err := s.PushTemplate(ctx, push("contoso-po", "", "v1"))
	require.NoError(t, err)
	ti, err := s.Template(ctx, "", "contoso-po")
	require.NoError(t, err)
	for i, wants := range []bool{true, false} {
		d, job := newDoc("acme", fmt.Sprintf("m%d", i), fmt.Sprintf("pdf%d", i))
		_, _, err := s.CreateDocument(ctx, d, job)
		require.NoError(t, err)
		got, err := s.IgnoredFeedback(ctx, d.ID)
		require.NoError(t, err)
		require.False(t, got, "not started")
		pin := store.AttemptTemplate{Attempt: 1, TemplateID: ti.ID, Name: "contoso-po", Version: 1, SHA256: ti.SHA256,
			IgnoredFeedback: wants}
		_, _, err = s.PinAttempt(ctx, d.ID, pin, document.StateReceived, "processor")
		require.NoError(t, err)
		// A second start of the attempt keeps the first pin's answer.
		pin.IgnoredFeedback = !wants
		_, _, err = s.PinAttempt(ctx, d.ID, pin, document.StateReceived, "processor")
		require.NoError(t, err)
		got, err = s.IgnoredFeedback(ctx, d.ID)
		require.NoError(t, err)
		require.Equal(t, wants, got)
	}
}
