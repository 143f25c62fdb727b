package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/services/processor"
	"github.com/stretchr/testify/require"
)

// replace returns an edit that swaps old for new in every line.
func replace(old, new string) func([]string) []string {
	return func(ls []string) []string {
		out := make([]string, 0, len(ls))
		for _, l := range ls {
			out = append(out, strings.ReplaceAll(l, old, new))
		}
		return out
	}
}

// appendLine returns an edit that adds a line at the end.
func appendLine(s string) func([]string) []string {
	return func(ls []string) []string { return append(ls, s) }
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	inst := b.start()

	cases := []struct {
		name   string
		pdf    []byte
		mode   document.ResultMode
		state  document.State
		reason document.Reason
		status string
	}{
		{"success", orderPDF("A-1", nil), "", document.StateProcessedSuccess, "", "success"},
		{"no items mode", orderPDF("A-2", replace("Items", "Positions")), document.ResultModeNoItems, document.StateProcessedSuccess, "", "success"},
		{"no items", orderPDF("A-3", replace("Items", "Positions")), "", document.StateProcessedRejected, document.ReasonCannotParseItems, "rejected"},
		{"keywords missing", orderPDF("A-4", replace("Purchase Order", "Delivery Note")), "", document.StateProcessedRejected, document.ReasonUnknownFormat, "rejected"},
		{"vat id missing", orderPDF("A-5", replace("VAT: DE123456789", "")), "", document.StateProcessedRejected, document.ReasonVATIDMissing, "rejected"},
		{"reject rule", orderPDF("A-6", appendLine("Order confirmation")), "", document.StateProcessedRejected, document.ReasonNotAnOrderResponse, "rejected"},
		{"ignore rule", orderPDF("A-7", appendLine("TEST PRINT")), "", document.StateProcessedIgnored, "", "ignored"},
	}
	docs := make([]document.Document, len(cases))
	for i, c := range cases {
		docs[i] = b.upload(c.pdf, docOpts{mode: c.mode})
	}
	byLog := map[string]int{}
	for i, c := range cases {
		d := b.waitState(docs[i], c.state, 20*time.Second)
		byLog[d.LogID] = i
		require.Equal(t, c.reason, d.StatusReason, c.name)
		require.Equal(t, []document.State{document.StateReceived, c.state}, transitions(b.events(d)), c.name)
		require.NotNil(t, d.DocumentDate, c.name)
		require.Equal(t, "2026-02-03", d.DocumentDate.Format(time.DateOnly), c.name)
		if c.state != document.StateProcessedSuccess {
			require.Empty(t, d.ResultPath, c.name)
			require.Empty(t, d.ResultKey, c.name)
			continue
		}
		// The keys are stored with the document; the URIs shown name them.
		require.Equal(t, objectstore.ResultKey(d.LogID, d.CreatedAt, "xml"), d.ResultKey)
		require.Equal(t, objectstore.ResultKey(d.LogID, d.CreatedAt, "json"), d.ResultJSONKey)
		require.Equal(t, b.objects.URI(d.ResultKey), d.ResultPath)
		require.Equal(t, b.objects.URI(d.ResultJSONKey), d.ResultJSONPath)
		require.Regexp(t, `^s3://`+b.s3.Bucket+`/results/\d{4}/\d{2}/\d{2}/`+d.LogID+`\.xml$`, d.ResultPath)
		require.Regexp(t, `^s3://`+b.s3.Bucket+`/results/\d{4}/\d{2}/\d{2}/`+d.LogID+`\.json$`, d.ResultJSONPath)
		xml := b.read(d.ResultPath)
		o, err := opentrans.Read(strings.NewReader(string(xml)))
		require.NoError(t, err)
		var res struct {
			LogID string `json:"log_id"`
			Order struct {
				OrderID   string `json:"order_id"`
				OrderDate string `json:"order_date"`
				Items     []struct {
					Buyer    string `json:"buyer_article_id"`
					Supplier string `json:"supplier_article_id"`
					Quantity string `json:"quantity"`
					Price    string `json:"unit_price"`
				} `json:"items"`
				NoItems bool `json:"no_items"`
			} `json:"order"`
		}
		require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
		require.Equal(t, d.LogID, res.LogID)
		require.Equal(t, "2026-02-03", res.Order.OrderDate)
		if c.mode == document.ResultModeNoItems {
			require.Equal(t, "A-2", o.ID)
			require.Empty(t, o.Items)
			require.True(t, res.Order.NoItems)
			continue
		}
		opentranstest.Validate(t, xml)
		require.Equal(t, "A-1", o.ID)
		require.Equal(t, "A-1", res.Order.OrderID)
		require.Len(t, o.Items, 2)
		require.Equal(t, "S-100", o.Items[0].SupplierArticleID, "mapped through the client's article table")
		require.Equal(t, "B-1", o.Items[0].BuyerArticleID)
		require.Equal(t, "10", o.Items[0].Quantity)
		require.Len(t, res.Order.Items, 2)
		require.Equal(t, "S-200", res.Order.Items[1].Supplier)
		require.Equal(t, "0.25", res.Order.Items[1].Price)
	}

	// Every processed_* state is announced to the dispatcher, with the
	// webhook status that goes with it.
	for _, j := range b.deliverJobs(len(cases)) {
		c := cases[byLog[j.GetLogId()]]
		require.Equal(t, string(c.state), j.GetState(), c.name)
		require.Equal(t, c.status, j.GetStatus(), c.name)
		require.Equal(t, clientID, j.GetClientId())
		require.True(t, strings.HasPrefix(j.GetDeliveryId(), "msg_"), j.GetDeliveryId())
	}

	// Metrics: outcomes counted, states read from PostgreSQL.
	reg := inst.reg
	require.Equal(t, 2.0, gauge(t, reg, "docintake_processor_jobs_total", "outcome", "success"))
	require.Equal(t, 4.0, gauge(t, reg, "docintake_processor_jobs_total", "outcome", "rejected"))
	require.Equal(t, 2.0, gauge(t, reg, "docintake_documents", "state", "processed_success"))
	require.Equal(t, 0.0, gauge(t, reg, "docintake_documents", "state", "received"))
	require.Equal(t, 0.0, gauge(t, reg, "docintake_oldest_received_age_seconds", "", ""))
	for _, c := range []string{"processor", "dispatcher"} { // every job was acked (the deliver jobs above)
		require.Equal(t, 0.0, gauge(t, reg, "docintake_consumer_pending", "consumer", c), c)
		require.Equal(t, 0.0, gauge(t, reg, "docintake_consumer_ack_pending", "consumer", c), c)
		require.Equal(t, 0.0, gauge(t, reg, "docintake_consumer_redelivered", "consumer", c), c)
	}
	require.Positive(t, histogramCount(t, reg, "docintake_processor_extraction_seconds", "pdftotext"))
}

// A duplicate or late copy of a job is acked without any effect.
func TestDuplicateJobIsNoOp(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addArticles()
	b.start()
	d := b.upload(orderPDF("D-1", nil), docOpts{})
	d = b.waitState(d, document.StateProcessedSuccess, 20*time.Second)
	before := b.objects.results.Load()
	delivered := b.processorDelivered()
	b.publishDuplicate(d, 1)
	waitFor(t, 10*time.Second, func() error {
		if b.processorDelivered() == delivered {
			return errors.New("duplicate not consumed yet")
		}
		return nil
	})
	waitFor(t, 10*time.Second, func() error { // acked: the work queue is empty
		info, err := b.js.Stream(t.Context(), b.qcfg.Stream)
		if err != nil {
			return err
		}
		si, err := info.Info(t.Context())
		if err != nil {
			return err
		}
		if si.State.Msgs != 1 { // the one deliver job nobody consumes here
			return errors.New("duplicate not acked yet")
		}
		return nil
	})
	require.Equal(t, before, b.objects.results.Load(), "no results written again")
	// received, the attempt's template pin, processed_success; nothing for
	// the duplicate.
	require.Len(t, b.events(d), 3, "no event for the duplicate")
}

func TestDeferralThenSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_RETRY_SCHEDULE": "300ms,300ms,300ms,300ms,300ms,300ms"})
	b.start()
	d := b.upload(orderPDF("M-1", nil), docOpts{})
	d = b.waitState(d, document.StateDeferredForRetry, 20*time.Second)
	require.Equal(t, document.ReasonMappingNotResolved, d.StatusReason)
	j := b.deliverJobs(1)[0]
	require.Equal(t, "deferred_for_retry", j.GetStatus())

	b.addArticles() // ops load the mapping; the next attempt succeeds
	d = b.waitState(d, document.StateProcessedSuccess, 20*time.Second)
	require.Empty(t, d.StatusReason, "the deferral's reason is cleared")
	tr := transitions(b.events(d))
	require.Equal(t, document.StateReceived, tr[0])
	require.Equal(t, document.StateDeferredForRetry, tr[1])
	require.Equal(t, document.StateProcessedSuccess, tr[len(tr)-1])
	o, err := opentrans.Read(strings.NewReader(string(b.read(d.ResultPath))))
	require.NoError(t, err)
	require.Equal(t, "S-100", o.Items[0].SupplierArticleID)
}

func TestDeferralExhaustedThenRequeue(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_RETRY_SCHEDULE": "100ms,100ms"})
	b.start()
	d := b.upload(orderPDF("X-1", nil), docOpts{})
	d = b.waitState(d, document.StateDLQ, 20*time.Second)
	require.Equal(t, document.ReasonMappingNotResolved, d.StatusReason)
	require.Equal(t, []document.State{document.StateReceived, document.StateDeferredForRetry, document.StateDeferredForRetry,
		document.StateDLQ}, transitions(b.events(d)))
	var statuses []string
	for _, j := range b.deliverJobs(3) {
		statuses = append(statuses, j.GetStatus())
	}
	require.ElementsMatch(t, []string{"deferred_for_retry", "deferred_for_retry", "failed"}, statuses)

	b.addArticles()
	_, err := lifecycle.Requeue(t.Context(), b.st, b.qcfg.SubjectPrefix, d, "operator:test")
	require.NoError(t, err)
	b.flush()
	d = b.waitState(d, document.StateProcessedSuccess, 20*time.Second)
	pr, err := b.st.Processing(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, 2, pr.ProcessSeq)
	require.Equal(t, 0, pr.Deferrals)

	// Requeue and give-up only apply to dlq documents.
	_, err = lifecycle.Requeue(t.Context(), b.st, b.qcfg.SubjectPrefix, d, "operator:test")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	_, err = lifecycle.GiveUp(t.Context(), b.st, d, "operator:test")
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	_, err = lifecycle.GiveUp(t.Context(), b.st, document.Document{ID: "00000000-0000-0000-0000-000000000000"}, "operator:test")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
}

// fakeEngine delegates to a real engine except for PDFs carrying a marker.
type fakeEngine struct {
	pdftext.Engine
}

func (f fakeEngine) Extract(ctx context.Context, pdf []byte) (*pdftext.Text, error) {
	if strings.Contains(string(pdf), "PANIC-IN-EXTRACTION") {
		panic("engine exploded")
	}
	return f.Engine.Extract(ctx, pdf)
}

func TestPoisonDocuments(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_MAX_FAILURES": "3"})
	b.addArticles()
	real, err := pdftext.New(pdftext.Options{Engine: pdftext.EnginePdftotext, Timeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = real.Close() })
	b.start(func(d *processor.Deps) { d.Engine = fakeEngine{real} })

	garbage := b.upload([]byte("%PDF-1.4\nthis is not a PDF at all\n%%EOF\n"), docOpts{})
	panicking := b.upload(pdfLines([]string{"PANIC-IN-EXTRACTION"}), docOpts{})
	missing := b.create(orderPDF("P-0", nil), docOpts{})
	require.NoError(t, b.objects.Delete(t.Context(), missing.SourceKey))
	b.flush()
	for _, d := range []document.Document{garbage, panicking, missing} {
		d = b.waitState(d, document.StateDLQ, 30*time.Second)
		ev := b.events(d)
		failures := 0
		for _, e := range ev {
			if e.From == e.To && e.Reason == "" && e.Actor == "processor" && !strings.HasPrefix(e.Detail, "attempt ") {
				failures++
			}
		}
		require.Equal(t, 3, failures, "every failed attempt is an event: %+v", ev)
		require.Equal(t, []document.State{document.StateReceived, document.StateDLQ}, transitions(ev))
		pr, err := b.st.Processing(t.Context(), d.ID)
		require.NoError(t, err)
		require.Equal(t, 3, pr.Failures)
	}
	require.Contains(t, b.events(panicking)[2].Detail, "engine exploded") // after received and the template pin
	// The worker survived and serves the next document.
	ok := b.upload(orderPDF("P-1", nil), docOpts{})
	b.waitState(ok, document.StateProcessedSuccess, 20*time.Second)
}

// An extraction that exceeds INTAKE_PDF_TIMEOUT is a failed attempt too.
func TestExtractionDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_MAX_FAILURES": "2", "INTAKE_PDF_TIMEOUT": "1us"})
	b.start()
	d := b.upload(orderPDF("T-1", nil), docOpts{})
	d = b.waitState(d, document.StateDLQ, 30*time.Second)
	ev := b.events(d)
	require.Contains(t, ev[len(ev)-1].Detail, "2 failed attempts")
	require.Contains(t, strings.ToLower(ev[2].Detail), "timed out") // after received and the template pin
}

// No malformed file of the shared corpus is delivered as not_an_order (an
// order desk reads that as "this is not an order"), although three of them
// print "Invoice No 4711" and contoso-po rejects invoices not_an_order: a
// PDF that cannot be opened (bad_random, bad_truncated) or is a
// decompression bomb (bad_flate_bomb) fails its attempts and ends in dlq;
// one poppler reads only by repairing its structure (bad_cyclic_pages,
// bad_huge_length; PROVENANCE.md) is rejected unknown_format saying it could
// not be read. The worker serves the next job.
func TestMalformedCorpus(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t)
	files, err := filepath.Glob(dir + "/corpus/malformed/*.pdf")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	// The default deadline: the bomb must not merely run out of time.
	b := setup(t, map[string]string{"INTAKE_PROCESSOR_MAX_FAILURES": "2", "INTAKE_PDF_TIMEOUT": "20s", "INTAKE_PDF_ENGINE": "auto"})
	b.addArticles()
	b.start()
	docs := map[string]document.Document{}
	for _, f := range files {
		docs[filepath.Base(f)] = b.upload(mustRead(t, f), docOpts{template: "contoso-po"})
	}
	want := map[string]string{ // the state, and what the events must say
		"bad_random.pdf":       "dlq: pdf unreadable",
		"bad_truncated.pdf":    "dlq: pdf unreadable",
		"bad_flate_bomb.pdf":   "dlq: decompression bomb",
		"bad_cyclic_pages.pdf": "processed_rejected: the PDF could not be read reliably: it is damaged (Loop in Pages tree)",
		"bad_huge_length.pdf":  "processed_rejected: the PDF could not be read reliably: it is damaged (Missing 'endstream' or incorrect stream length)",
	}
	for f, d := range docs {
		var got document.Document
		waitFor(t, 90*time.Second, func() error {
			if got, err = b.st.Document(t.Context(), d.ID); err != nil {
				return err
			}
			if got.State == document.StateDLQ || got.State == document.StateProcessedRejected {
				return nil
			}
			return errors.New(f + " is " + string(got.State))
		})
		require.NotEqual(t, document.ReasonNotAnOrder, got.StatusReason, f)
		var details []string
		for _, e := range b.events(d) {
			details = append(details, e.Detail)
		}
		if w, ok := want[f]; ok {
			state, detail, _ := strings.Cut(w, ": ")
			require.Equal(t, state, string(got.State), f)
			require.Contains(t, strings.Join(details, "\n"), detail, f)
		}
		if got.State == document.StateProcessedRejected {
			require.Equal(t, document.ReasonUnknownFormat, got.StatusReason, f)
			require.Contains(t, strings.Join(details, "\n"), "could not be read", f)
		}
	}
	ok := b.upload(orderPDF("OK-1", nil), docOpts{})
	b.waitState(ok, document.StateProcessedSuccess, 20*time.Second)
}

// Purchase orders of the shared corpus, through the processor with the
// shipped templates: processed_success, XSD-valid XML, the printed values.
func TestCorpusOrders(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(sharedDir(t), "corpus", "orders")
	b := setup(t, nil)
	b.start()
	type item struct{ article, qty, price, amount string }
	cases := []struct {
		file, template, id, date, gross string
		items                           []item
	}{
		// Values as printed (pdftotext -layout of each file).
		{"contoso-po-Adatum-Adel.pdf", "contoso-po", "190122", "2019-07-27", "6547.55",
			[]item{{"MM4-4010", "89", "62.00", "5518.00"}, {"SH-L2216", "11", "22.00", "242.00"}}},
		// The Order-X PDF carries its XML, which wins over the printed text:
		// the values of order-x.xml ("6" and "25" where the page prints 6.00 and 25.00).
		{"orderx-ex01-order-comfort.pdf", "orderx-comfort", "PO123456789", "2020-03-31", "360.00",
			[]item{{"987654321", "6", "10.00", "60.00"}, {"598632147", "10.00", "20.00", "100.00"}, {"698325417", "6", "25", "150.00"}}},
	}
	docs := make([]document.Document, len(cases))
	for i, c := range cases {
		docs[i] = b.upload(mustRead(t, filepath.Join(dir, c.file)), docOpts{template: c.template})
	}
	for i, c := range cases {
		d := b.waitState(docs[i], document.StateProcessedSuccess, 30*time.Second)
		require.Equal(t, c.date, d.DocumentDate.Format(time.DateOnly), c.file)
		xml := b.read(d.ResultPath)
		opentranstest.Validate(t, xml)
		o, err := opentrans.Read(strings.NewReader(string(xml)))
		require.NoError(t, err)
		require.Equal(t, c.id, o.ID, c.file)
		require.Equal(t, c.date, o.IssueDate.String(), c.file)
		require.Equal(t, c.gross, o.Totals.GrossAmount, c.file)
		require.Len(t, o.Items, len(c.items), c.file)
		for j, w := range c.items {
			it := o.Items[j]
			require.Equal(t, w, item{it.SupplierArticleID, it.Quantity, it.UnitPrice, it.LineAmount}, "%s item %d", c.file, j+1)
		}
		var res struct {
			Order struct {
				OrderID string `json:"order_id"`
				Items   []any  `json:"items"`
			} `json:"order"`
		}
		require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
		require.Equal(t, c.id, res.Order.OrderID)
		require.Len(t, res.Order.Items, len(c.items))
	}
}

// A scanned page whose OCR runs over INTAKE_OCR_PAGE_TIMEOUT is skipped
// with a warning in the document's events; the order on the other page is
// still read.
func TestOCRPageOverBudgetIsAnEvent(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"tesseract", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not installed (the processor runs OCR only with it)", tool)
		}
	}
	// 1ns: the page's budget is over before its rendering starts.
	b := setup(t, map[string]string{"INTAKE_OCR_PAGE_TIMEOUT": "1ns"})
	b.addArticles()
	b.start()
	var lines []string // the order's lines, as orderPDF prints them
	orderPDF("W-1", func(ls []string) []string { lines = ls; return ls })
	img := pdftexttest.TextImage([]string{"Delivery note"}, 2)
	scanned := pdftexttest.Page{Width: 300, Height: 100, Images: []pdftexttest.Image{{X: 10, Y: 10, W: 200, H: 40, Img: img}}}
	d := b.upload(pdftexttest.Build(pdftexttest.LinesPage(lines), scanned), docOpts{})
	d = b.waitState(d, document.StateProcessedSuccess, 20*time.Second)
	var warnings []document.Event
	for _, e := range b.events(d) {
		if strings.Contains(e.Detail, "not read") {
			warnings = append(warnings, e)
		}
	}
	require.Len(t, warnings, 1)
	require.Equal(t, "processor", warnings[0].Actor)
	require.Equal(t, document.StateReceived, warnings[0].To)
	require.Equal(t, "text extraction: page 2 not read: OCR took longer than the page budget of 1ns (INTAKE_OCR_PAGE_TIMEOUT)", warnings[0].Detail)
}
