package processor_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/services/processor"
	"github.com/stretchr/testify/require"
)

// eventTo returns the detail of the document's event that moved it to
// state.
func (b *bundle) eventTo(d document.Document, state document.State) string {
	b.t.Helper()
	for _, e := range b.events(d) {
		if e.To == state && e.From != state {
			return e.Detail
		}
	}
	b.t.Fatalf("document %s has no event to %s", d.LogID, state)
	return ""
}

// Issue 28: the same PO uploaded twice (another message_id, another PDF
// print with the same order in it) is delivered once; the copy is ignored
// naming the delivered document.
func TestDuplicatePOIgnored(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()

	first := b.waitState(b.upload(orderPDF("DUP-1", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	// A reprint: other file bytes, a line the template does not read.
	copyPDF := orderPDF("DUP-1", appendLine("Printed again 2026-02-05 10:00"))
	require.NotEqual(t, orderPDF("DUP-1", nil), copyPDF)
	second := b.upload(copyPDF, docOpts{})
	require.NotEqual(t, first.MessageID, second.MessageID)
	second = b.waitState(second, document.StateProcessedIgnored, 20*time.Second)

	require.Empty(t, second.StatusReason)
	require.Empty(t, second.ResultPath, "a duplicate has no result")
	require.Empty(t, second.ResultJSONPath)
	detail := b.eventTo(second, document.StateProcessedIgnored)
	require.True(t, strings.HasPrefix(detail, "duplicate of "+first.LogID+" "), detail)
	require.Contains(t, detail, "order DUP-1 of buyer ACME") // the template's party id

	// The delivered document is untouched; the copy is announced as
	// ignored (the dispatcher sends it only where the template asks).
	first = b.waitState(first, document.StateProcessedSuccess, time.Second)
	require.NotEmpty(t, first.ResultPath)
	statuses := map[string]string{}
	for _, j := range b.deliverJobs(2) {
		statuses[j.GetLogId()] = j.GetStatus()
	}
	require.Equal(t, map[string]string{first.LogID: "success", second.LogID: "ignored"}, statuses)

	// Another order number is another PO.
	b.waitState(b.upload(orderPDF("DUP-2", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
}

// Issue 28: the same PO with one quantity changed is a revision: success
// with an XSD-valid ORDERCHANGE carrying the sequence number and the whole
// changed order, and the history names the earlier delivery and the change.
func TestRevisedPOIsOrderChange(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()

	first := b.waitState(b.upload(orderPDF("REV-1", nil), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	xml := b.read(first.ResultPath)
	require.Contains(t, string(xml), "<ORDER ", "the first delivery is an ORDER")

	nuts := "N-2      Nuts       20      0.25"
	revise := func(qty string) func([]string) []string {
		return replace(nuts, "N-2      Nuts       "+qty+"      0.25")
	}
	second := b.waitState(b.upload(orderPDF("REV-1", revise("12")), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	xml = b.read(second.ResultPath)
	opentranstest.Validate(t, xml)
	require.Contains(t, string(xml), "<ORDERCHANGE ")
	require.Contains(t, string(xml), "<ORDERCHANGE_SEQUENCE_ID>1</ORDERCHANGE_SEQUENCE_ID>")
	// opentrans.Read reads no ORDERCHANGE: the elements, in order.
	require.Equal(t, []string{"REV-1"}, xmlTexts(t, xml, "ORDERCHANGE_INFO", "ORDER_ID"))
	require.Equal(t, []string{"S-100", "S-200"}, xmlTexts(t, xml, "PRODUCT_ID", "SUPPLIER_PID"), "the full changed order")
	require.Equal(t, []string{"10", "12"}, xmlTexts(t, xml, "ORDER_ITEM", "QUANTITY"))
	want := fmt.Sprintf("revision 1 of order REV-1 (buyer ACME), changes %s: line 2 quantity 20 → 12", first.LogID)
	require.True(t, strings.HasPrefix(b.eventTo(second, document.StateProcessedSuccess), want+";"),
		b.eventTo(second, document.StateProcessedSuccess))
	require.Contains(t, xmlTexts(t, xml, "ORDERCHANGE_INFO", "REMARKS"), want, "the ERP reads what changed too")

	// The next revision counts on and is compared with the latest one.
	third := b.waitState(b.upload(orderPDF("REV-1", revise("15")), docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	xml = b.read(third.ResultPath)
	opentranstest.Validate(t, xml)
	require.Contains(t, string(xml), "<ORDERCHANGE_SEQUENCE_ID>2</ORDERCHANGE_SEQUENCE_ID>")
	require.Contains(t, b.eventTo(third, document.StateProcessedSuccess),
		fmt.Sprintf("revision 2 of order REV-1 (buyer ACME), changes %s: line 2 quantity 12 → 15", second.LogID))

	// A copy of the latest revision is a duplicate of it.
	copyDoc := b.waitState(b.upload(orderPDF("REV-1", revise("15")), docOpts{}), document.StateProcessedIgnored, 20*time.Second)
	require.True(t, strings.HasPrefix(b.eventTo(copyDoc, document.StateProcessedIgnored), "duplicate of "+third.LogID+" "))
}

// A PO delivered before the client's window is a new order again; a
// window of 0 days turns the check off.
func TestDuplicateWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()
	pdf := orderPDF("WIN-1", nil)
	first := b.waitState(b.upload(pdf, docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	_, err := b.st.Pool().Exec(t.Context(), `UPDATE po_identities SET delivered_at = now() - interval '91 days'`)
	require.NoError(t, err)
	second := b.waitState(b.upload(pdf, docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	require.Contains(t, string(b.read(second.ResultPath)), "<ORDER ", "outside the default 90 days: a new ORDER")
	require.NotEqual(t, first.LogID, second.LogID)

	require.NoError(t, b.st.SetDuplicateWindow(t.Context(), clientID, 0))
	third := b.waitState(b.upload(pdf, docOpts{}), document.StateProcessedSuccess, 20*time.Second)
	require.Contains(t, string(b.read(third.ResultPath)), "<ORDER ")
}

// Issue 28: copies of one PO processed at the same moment by two processor
// instances give exactly one success; PostgreSQL's constraint decides, the
// others are duplicates of the one delivered.
func TestConcurrentCopiesOneSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_CONCURRENCY": "4"})
	b.addArticles()
	const pos, copies = 4, 3
	var docs []document.Document
	for i := range pos {
		pdf := orderPDF(fmt.Sprintf("RACE-%d", i), nil)
		for range copies {
			docs = append(docs, b.create(pdf, docOpts{})) // jobs stay in the outbox
		}
	}
	// Every copy of a PO renders its result before any of them commits, so
	// all of them find the PO undelivered and race to deliver it: the
	// database's constraint, not a read, has to decide.
	gate := &barrier{store: b.objects, arrive: map[string]chan struct{}{}, copies: copies}
	for i, d := range docs {
		gate.po(d.LogID, fmt.Sprintf("RACE-%d", i/copies))
	}
	gated := func(d *processor.Deps) { d.Objects = gate }
	b.start(gated) // two processors take the copies at once
	b.start(gated)
	b.flush() // all jobs at once

	success := map[string]string{} // order id → log id of its success
	var ignored []document.Document
	for _, d := range docs {
		waitFor(t, 30*time.Second, func() error {
			cur, err := b.st.Document(t.Context(), d.ID)
			if err != nil {
				return err
			}
			if cur.State != document.StateProcessedSuccess && cur.State != document.StateProcessedIgnored {
				return fmt.Errorf("document %s is %s", d.LogID, cur.State)
			}
			d = cur
			return nil
		})
		o, err := opentrans.Read(bytes.NewReader(mustReadOrNil(b, d)))
		switch d.State {
		case document.StateProcessedSuccess:
			require.NoError(t, err)
			require.Empty(t, success[o.ID], "a second success for %s", o.ID)
			success[o.ID] = d.LogID
			require.Equal(t, order.TypeOrder, o.Type)
		default:
			ignored = append(ignored, d)
		}
	}
	require.Len(t, success, pos)
	require.Len(t, ignored, pos*(copies-1))
	for _, d := range ignored {
		detail := b.eventTo(d, document.StateProcessedIgnored)
		var of, id string
		_, err := fmt.Sscanf(detail, "duplicate of %s (order %s ", &of, &id)
		require.NoError(t, err, detail)
		require.Equal(t, success[id], of, "%s is a duplicate of the delivered %s", d.LogID, id)
	}
}

// xmlTexts returns the text of every element named child directly inside
// an element named parent.
func xmlTexts(t *testing.T, doc []byte, parent, child string) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []string
	var out []string
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e.Name.Local)
			text.Reset()
		case xml.CharData:
			text.Write(e)
		case xml.EndElement:
			if n := len(stack); n >= 2 && stack[n-1] == child && stack[n-2] == parent {
				out = append(out, strings.TrimSpace(text.String()))
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// barrier holds the first XML result put of each copy of a PO until every
// copy has reached it.
type barrier struct {
	store  objectstore.Store
	copies int
	mu     sync.Mutex
	of     map[string]string        // log id → PO
	arrive map[string]chan struct{} // PO → closed when all copies arrived
	count  map[string]int
	passed map[string]bool // log id → held once already
}

func (g *barrier) po(logID, po string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.of == nil {
		g.of, g.count, g.passed = map[string]string{}, map[string]int{}, map[string]bool{}
	}
	g.of[logID] = po
	if g.arrive[po] == nil {
		g.arrive[po] = make(chan struct{})
	}
}

func (g *barrier) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) error {
	if strings.HasSuffix(key, ".xml") {
		g.mu.Lock()
		logID := strings.TrimSuffix(path.Base(key), ".xml")
		po, hold := g.of[logID], !g.passed[logID]
		var ch chan struct{}
		if po != "" && hold {
			g.passed[logID] = true
			g.count[po]++
			ch = g.arrive[po]
			if g.count[po] == g.copies {
				close(ch)
			}
		}
		g.mu.Unlock()
		if ch != nil {
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return g.store.Put(ctx, key, r, size, ct)
}

func (g *barrier) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	return g.store.Get(ctx, key)
}
func (g *barrier) Delete(ctx context.Context, key string) error { return g.store.Delete(ctx, key) }
func (g *barrier) Ping(ctx context.Context) error               { return g.store.Ping(ctx) }
func (g *barrier) URI(key string) string                        { return g.store.URI(key) }

// mustReadOrNil is the document's XML result, nil without one.
func mustReadOrNil(b *bundle, d document.Document) []byte {
	if d.ResultPath == "" {
		return nil
	}
	return b.read(d.ResultPath)
}
