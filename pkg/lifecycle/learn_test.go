package lifecycle_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/lifecycle/lifecycletest"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/draft"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestMain(m *testing.M) { objectstoretest.Main(m) }

// learnEnv is a store, an S3 bucket and the review actions over them, for
// client acme (review: hold).
type learnEnv struct {
	st     *store.Store
	objs   objectstore.Store
	review lifecycle.Review
}

func newLearnEnv(t *testing.T) learnEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL and S3")
	}
	st := storetest.Store(t)
	require.NoError(t, st.UpsertClient(t.Context(), document.Client{ID: "acme", Name: "ACME", Review: document.ReviewHold}))
	cat, err := catalogue.Open(t.Context(), st, zap.NewNop(), catalogue.Options{Recheck: -1})
	require.NoError(t, err)
	t.Cleanup(cat.Close)
	text := &catalogue.SampleText{}
	t.Cleanup(func() { _ = text.Close() })
	objs := objectstoretest.S3(t)
	return learnEnv{st: st, objs: objs,
		review: lifecycle.Review{Store: st, Objects: objs, Pinned: cat.Pinned, Prefix: "intake", SampleText: text.Text}}
}

// contoso returns the shipped Contoso template and the corpus PDF
// contoso-po-Adatum-Adel.pdf (PO # 190122 of 7/27/2019, two items).
func contoso(t *testing.T) (yml, pdf []byte) {
	t.Helper()
	pdfPath := repotest.Shared(t, "corpus", "orders", "contoso-po-Adatum-Adel.pdf")
	yml, err := os.ReadFile(filepath.Join(repotest.Root(t), "deploy", "templates", "contoso-po.yml"))
	require.NoError(t, err)
	pdf, err = os.ReadFile(pdfPath)
	require.NoError(t, err)
	return yml, pdf
}

// brokenContoso is the Contoso template reading the order number under a
// label the PO does not print: every Contoso PO is rejected
// document_id_missing.
func brokenContoso(yml []byte) []byte {
	return bytes.Replace(yml, []byte(`regex: 'PO #\s+(\d+)'`), []byte(`regex: 'PO No\.\s+(\d+)'`), 1)
}

// heldContoso pushes brokenContoso as contoso-po v1 and returns the PO
// held for review by it.
func (e learnEnv) heldContoso(t *testing.T, yml, pdf []byte) document.Document {
	t.Helper()
	_, err := e.st.PushTemplate(t.Context(), store.TemplatePush{Name: "contoso-po", Filename: "contoso-po.yml",
		Content: brokenContoso(yml), PushedBy: "t"})
	require.NoError(t, err)
	return e.process(t, "contoso-po", pdf)
}

// process is lifecycletest.Process for client acme.
func (e learnEnv) process(t *testing.T, name string, pdf []byte) document.Document {
	t.Helper()
	return lifecycletest.Process(t, e.st, e.objs, e.review.SampleText, "acme", name, pdf)
}

// The whole loop of "add as a sample": a Contoso PO rejected by a template
// that misses its order number is held, approved with the number printed
// on it, and added as a sample. The new version holds the PDF and the
// confirmed order; the template as it is does not deliver it (stored
// forced, the sample's failure says why), and the fixed template passes
// it, as `templates push` would test it.
func TestAddSampleFromReview(t *testing.T) {
	t.Parallel()
	e := newLearnEnv(t)
	ctx := t.Context()
	yml, pdf := contoso(t)
	d := e.heldContoso(t, yml, pdf)

	_, err := e.review.AddSample(ctx, d, "operator:carol")
	require.Equal(t, "not_reviewed", codeOf(err), "a held document has no confirmed order yet: %v", err)

	rd, err := e.review.Held(ctx, d)
	require.NoError(t, err)
	require.Equal(t, document.ReasonDocumentIDMissing, rd.Reason)
	corrected := rd.Result.Order
	corrected.OrderID = "190122" // printed as "PO # 190122"
	_, err = e.review.Approve(ctx, d, corrected, "", "operator:carol")
	require.NoError(t, err)

	added, err := e.review.AddSample(ctx, d, "operator:carol")
	require.NoError(t, err)
	require.Equal(t, lifecycle.SampleAdded{Template: "contoso-po", Version: 2, Changed: true,
		Sample: "review-" + d.LogID + ".pdf", Forced: true, Results: added.Results}, added)
	require.Len(t, added.Results, 1)
	require.False(t, added.Results[0].Pass)
	require.Contains(t, added.Results[0].Line(), "document_id_missing", "the template as it is misses the order number")

	v2, err := e.st.TemplateVersion(ctx, "", "contoso-po", 2)
	require.NoError(t, err)
	require.True(t, v2.Forced)
	require.Equal(t, "operator:carol", v2.PushedBy)
	require.Equal(t, brokenContoso(yml), v2.Content, "the served content is unchanged")
	sample := samplesByName(v2.Samples)
	require.Equal(t, pdf, sample["review-"+d.LogID+".pdf"])
	var want catalogue.OrderSample
	require.NoError(t, json.Unmarshal(sample["review-"+d.LogID+".json"], &want))
	// What the PO prints.
	require.Equal(t, "190122", want.Order.OrderID)
	require.Equal(t, "2019-07-27", want.Order.OrderDate)
	require.Len(t, want.Order.Items, 2)
	require.Equal(t, []string{"MM4-4010", "89", "62.00", "5518.00"}, []string{want.Order.Items[0].SupplierArticleID,
		want.Order.Items[0].Quantity, want.Order.Items[0].UnitPrice, want.Order.Items[0].LineAmount})
	require.Equal(t, "6547.55", want.Order.Totals.GrossAmount)

	ev, err := e.st.Events(ctx, d.ID)
	require.NoError(t, err)
	last := ev[len(ev)-1]
	require.Equal(t, "operator:carol", last.Actor)
	require.Contains(t, last.Detail, "added as sample review-"+d.LogID+".pdf of template contoso-po v2 (global)")

	// The template's author fixes the order number and pushes with the
	// version's samples (templates pull, edit, push): the sample passes.
	fixed, err := catalogue.NewTemplatePush("contoso-po.yml", yml, v2.Samples)
	require.NoError(t, err)
	results, err := catalogue.RunSamples(ctx, fixed, e.review.SampleText)
	require.NoError(t, err)
	require.Len(t, results, 1)
	require.True(t, results[0].Pass, results[0].Line())

	again, err := e.review.AddSample(ctx, d, "operator:carol")
	require.NoError(t, err)
	require.False(t, again.Changed, "the same sample twice is one version")
	require.Equal(t, 2, again.Version)
}

// A success read as it is (no correction) added as a sample passes the
// template that read it, and a document read by the built-in generic
// reader cannot be a template's sample.
func TestAddSampleOfSuccess(t *testing.T) {
	t.Parallel()
	e := newLearnEnv(t)
	ctx := t.Context()
	yml, pdf := contoso(t)
	_, err := e.st.PushTemplate(ctx, store.TemplatePush{Name: "contoso-po", Filename: "contoso-po.yml", Content: yml, PushedBy: "t"})
	require.NoError(t, err)
	d := e.process(t, "contoso-po", pdf)
	require.Equal(t, document.StateProcessedSuccess, d.State)
	added, err := e.review.AddSample(ctx, d, "operator:dave")
	require.NoError(t, err)
	require.True(t, added.Changed)
	require.False(t, added.Forced)
	require.Len(t, added.Results, 1)
	require.True(t, added.Results[0].Pass, added.Results[0].Line())
}

func codeOf(err error) string {
	if e, ok := document.AsError(err); ok {
		return e.Code
	}
	return ""
}

func samplesByName(s []store.TemplateSample) map[string][]byte {
	out := map[string][]byte{}
	for _, x := range s {
		out[x.Name] = x.Content
	}
	return out
}

// "Draft a template" from a held Contoso PO with the order number a
// person typed from the PDF: the draft, anchored on the corrected order,
// reads the PO's number, date, totals and items back from the PDF.
func TestDraftFromReview(t *testing.T) {
	t.Parallel()
	e := newLearnEnv(t)
	ctx := t.Context()
	yml, pdf := contoso(t)
	d := e.heldContoso(t, yml, pdf)
	rd, err := e.review.Held(ctx, d)
	require.NoError(t, err)
	corrected := rd.Result.Order
	corrected.OrderID = "190122"
	dr, err := e.review.Draft(ctx, d, &corrected, draft.Options{})
	require.NoError(t, err)
	require.Equal(t, "contoso-po", dr.Name, "named after the template the PO was processed with")
	require.True(t, dr.ReadsBack, dr.Report)
	require.Contains(t, dr.Report, `order_id        found   label "PO #"`)
	require.Contains(t, dr.Report, "read back: review-"+d.LogID+".pdf as confirmed (order id, dates, currency, totals, 2 items)")

	// The draft with its sample, as `templates push` would store it: its
	// reading of the PDF, value by value.
	tpl, err := catalogue.CompileVersion(dr.Name, dr.Name+".yml", dr.YAML)
	require.NoError(t, err)
	set, err := template.NewSet(tpl)
	require.NoError(t, err)
	text, err := e.review.SampleText(ctx, "po.pdf", pdf)
	require.NoError(t, err)
	run, err := set.Run(ctx, text, template.RunOptions{Template: dr.Name})
	require.NoError(t, err)
	require.Equal(t, template.OutcomeSuccess, run.Outcome.Status, run.Outcome.String())
	o := resultjson.OrderOf(run.Order)
	require.Equal(t, []string{"190122", "2019-07-27", "USD", "5760.00", "512.64", "6547.55"},
		[]string{o.OrderID, o.OrderDate, o.Currency, o.Totals.NetAmount, o.Totals.TaxAmount, o.Totals.GrossAmount})
	require.Equal(t, [][]string{{"MM4-4010", "89", "62.00", "5518.00"}, {"SH-L2216", "11", "22.00", "242.00"}},
		[][]string{{o.Items[0].SupplierArticleID, o.Items[0].Quantity, o.Items[0].UnitPrice, o.Items[0].LineAmount},
			{o.Items[1].SupplierArticleID, o.Items[1].Quantity, o.Items[1].UnitPrice, o.Items[1].LineAmount}})

	// Its test against the confirmed order names what a person still has
	// to add (the contacts the shipped template reads), nothing of the
	// values above.
	require.Len(t, dr.Results, 1)
	require.Equal(t, "review-"+d.LogID+".pdf", dr.Results[0].Name)
	for _, p := range dr.Results[0].Problems {
		require.NotRegexp(t, `^(order_id|order_date|currency|totals|items)`, p)
	}
	require.Equal(t, []string{"review-" + d.LogID + ".json", "review-" + d.LogID + ".pdf"}, sampleNames(dr.Samples))
}

func sampleNames(s []store.TemplateSample) []string {
	var out []string
	for _, x := range s {
		out = append(out, x.Name)
	}
	slices.Sort(out)
	return out
}
