package processor_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// synthetic returns a corpus PDF of pkg/template/testdata/synthetic's
// layouts and its truth's order id (the corpus's JSON beside it).
func synthetic(t *testing.T, name string) (pdf []byte, orderID string) {
	t.Helper()
	dir := repotest.Shared(t, "corpus", "synthetic") // skips without it, fails under CI=true
	pdf = mustRead(t, filepath.Join(dir, name+".pdf"))
	var truth struct {
		OrderID string `json:"order_id"`
	}
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, name+".json")), &truth))
	require.NotEmpty(t, truth.OrderID)
	return pdf, truth.OrderID
}

// pushSynthetic stores the shipped synthetic template of layout (e.g.
// "alpine": its name is synthetic-alpine), with edit applied to its YAML.
func (b *bundle) pushSynthetic(layout string, edit func(string) string) {
	b.t.Helper()
	y, err := os.ReadFile(filepath.Join(repoRoot(b.t), "pkg", "template", "testdata", "synthetic", layout+".yml"))
	require.NoError(b.t, err)
	s := string(y)
	if edit != nil {
		s = edit(s)
	}
	b.push(s)
}

// renamed is an edit giving a synthetic template another name and a
// priority.
func renamed(name, priority string) func(string) string {
	return func(s string) string {
		s = strings.Replace(s, "  name: synthetic-alpine", "  name: "+name, 1)
		return "priority: " + priority + "\n" + s
	}
}

// uploadUnrouted stores pdf as a document of client without template or
// party_id (what intake makes of a mail from an unmapped sender) and
// publishes its job.
func (b *bundle) uploadUnrouted(pdf []byte, client string) document.Document {
	b.t.Helper()
	ctx := b.t.Context()
	logID := uuid.NewString()
	now := time.Now()
	key := objectstore.SourceKey(logID, now)
	require.NoError(b.t, b.objects.Store.Put(ctx, key, bytes.NewReader(pdf), int64(len(pdf)), "application/pdf"))
	sum := sha256.Sum256(pdf)
	d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: logID, ClientID: client, MessageID: "m-" + logID,
		FileSHA256: sum[:], FileSize: int64(len(pdf)), Filename: "order.pdf", Subject: "PO",
		SourceKey: key, SourcePath: b.objects.URI(key)}
	d, created, err := b.st.CreateDocumentNoted(ctx, d, jobs.Process(b.qcfg.SubjectPrefix, d, 1, now), "route pending: test")
	require.NoError(b.t, err)
	require.True(b.t, created)
	b.flush()
	return d
}

// routeEvent is the history's line of the routing step ("" when none).
func (b *bundle) routeEvent(d document.Document) string {
	b.t.Helper()
	for _, e := range b.events(d) {
		if strings.HasPrefix(e.Detail, "routed ") || strings.Contains(e.Detail, "not routed: ") {
			return e.Detail
		}
	}
	return ""
}

// Documents without template or party_id are routed by their keywords:
// each of two buyers' POs gets its own buyer's template, is read with it
// (the order id printed on the PDF) and the history names the step.
func TestRouteByKeywords(t *testing.T) {
	t.Parallel()
	alpine, alpineID := synthetic(t, "alpine-1")
	nordwind, nordwindID := synthetic(t, "nordwind-1")
	b := setup(t, nil)
	b.pushSynthetic("alpine", nil)
	b.pushSynthetic("nordwind", nil)
	b.waitServed("synthetic-alpine")
	b.waitServed("synthetic-nordwind")
	b.start()

	for _, c := range []struct {
		pdf             []byte
		template, order string
	}{{alpine, "synthetic-alpine", alpineID}, {nordwind, "synthetic-nordwind", nordwindID}} {
		d := b.waitDone(b.uploadUnrouted(c.pdf, clientID))
		require.Equal(t, document.StateProcessedSuccess, d.State, "reason %s", d.StatusReason)
		require.Equal(t, c.template, d.Template)
		require.Contains(t, b.routeEvent(d), "routed by keywords: template "+c.template+" (priority 5), the only one of ")
		var res genericResult
		require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
		require.Equal(t, c.template, res.Template)
		require.Equal(t, c.order, res.Order.OrderID)
	}
}

// Two templates whose keywords all match: the higher priority wins,
// whichever it is; the history names the loser.
func TestRouteByPriority(t *testing.T) {
	t.Parallel()
	alpine, _ := synthetic(t, "alpine-1")
	b := setup(t, nil)
	b.pushSynthetic("alpine", nil)                             // priority 5
	b.pushSynthetic("alpine", renamed("alpine-urgent", "9"))   // the same keywords, priority 9
	b.pushSynthetic("alpine", renamed("alpine-fallback", "1")) // priority 1
	for _, n := range []string{"synthetic-alpine", "alpine-urgent", "alpine-fallback"} {
		b.waitServed(n)
	}
	b.start()
	d := b.waitDone(b.uploadUnrouted(alpine, clientID))
	require.Equal(t, "alpine-urgent", d.Template)
	require.Equal(t, "routed by keywords: template alpine-urgent (priority 9) over synthetic-alpine (priority 5), alpine-fallback (priority 1)",
		b.routeEvent(d))
	require.Equal(t, document.StateProcessedSuccess, d.State, "reason %s", d.StatusReason)
}

// Two templates matching with the same priority are no choice: the
// document goes to the generic reader where its client allows it, else it
// is rejected unknown_format, or held for review where the client holds.
func TestRouteTie(t *testing.T) {
	t.Parallel()
	alpine, _ := synthetic(t, "alpine-1")
	b := setup(t, nil)
	b.pushSynthetic("alpine", nil)
	b.pushSynthetic("alpine", renamed("alpine-twin", "5"))
	b.waitServed("synthetic-alpine")
	b.waitServed("alpine-twin")
	ctx := t.Context()
	require.NoError(t, b.st.UpsertClient(ctx, document.Client{ID: "reads-new", WebhookURL: "http://127.0.0.1:1/hook", WebhookEnabled: true,
		UnknownParty: document.UnknownPartyGeneric}))
	require.NoError(t, b.st.UpsertClient(ctx, document.Client{ID: "holds", WebhookURL: "http://127.0.0.1:1/hook", WebhookEnabled: true,
		Review: document.ReviewHold}))
	b.start()
	const tie = "keywords: templates alpine-twin, synthetic-alpine match with the same priority 5: no choice"

	rejected := b.waitDone(b.uploadUnrouted(alpine, clientID))
	require.Equal(t, document.StateProcessedRejected, rejected.State)
	require.Equal(t, document.ReasonUnknownFormat, rejected.StatusReason)
	require.Empty(t, rejected.Template)
	require.Contains(t, b.eventTo(rejected, document.StateProcessedRejected), "not routed: no sender mapping chose a template; "+tie)
	require.Len(t, b.deliverJobs(1), 1, "the rejection is delivered")

	gen := b.waitDone(b.uploadUnrouted(alpine, "reads-new"))
	require.Equal(t, "generic", gen.Template)
	require.Equal(t, "routed to the generic reader (the client's unknown_party: generic): "+tie, b.routeEvent(gen))

	held := b.waitDone(b.uploadUnrouted(alpine, "holds"))
	require.Equal(t, document.StateProcessedRejected, held.State)
	require.Equal(t, document.ReasonUnknownFormat, held.StatusReason)
	require.Contains(t, b.eventTo(held, document.StateProcessedRejected), "held for review until ")
	queue, err := b.st.ReviewQueue(ctx, "holds", 10)
	require.NoError(t, err)
	require.Len(t, queue, 1)
	require.Equal(t, held.LogID, queue[0].LogID)
}
