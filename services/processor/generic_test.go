package processor_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/stretchr/testify/require"
)

// contosoTemplate is a template for the Contoso purchase orders whose
// regexes find nothing (this PDF prints "PO #", not "Order number"), so it
// rejects document_id_missing; fallback is its docintake.fallback line.
func contosoTemplate(name, fallback string) string {
	return `keywords: [Contoso Electronics]
fields:
  order_id: {parser: regex, regex: 'Order number: (\d+)'}
  date: {parser: regex, regex: 'Order date: (\d+/\d+/\d+)', type: date}
options:
  currency: USD
  date_formats: ['%m/%d/%Y']
docintake:
  name: ` + name + `
` + fallback
}

// push stores content as a global template version.
func (b *bundle) push(content string) {
	b.t.Helper()
	p, err := catalogue.NewTemplatePush("t.yml", []byte(content), nil)
	require.NoError(b.t, err)
	p.PushedBy = "test"
	_, err = b.st.PushTemplate(b.t.Context(), p)
	require.NoError(b.t, err)
}

// waitServed waits until the catalogue serves the template name (a push is
// live within moments: LISTEN/NOTIFY).
func (b *bundle) waitServed(name string) {
	b.t.Helper()
	b.tmpls.Kick()
	waitFor(b.t, 10*time.Second, func() error {
		if _, ok := b.tmpls.Current(clientID, name); !ok {
			return fmt.Errorf("template %s not served yet", name)
		}
		return nil
	})
}

// waitDone waits until d's processing ended (whatever the outcome), so a
// wrong outcome fails at once with its reason instead of a timeout.
func (b *bundle) waitDone(d document.Document) document.Document {
	b.t.Helper()
	waitFor(b.t, 60*time.Second, func() error {
		var err error
		if d, err = b.st.Document(b.t.Context(), d.ID); err != nil {
			return err
		}
		if d.State.Pending() {
			return fmt.Errorf("document %s still %s", d.LogID, d.State)
		}
		return nil
	})
	return d
}

type genericResult struct {
	Template        string `json:"template"`
	TemplateVersion int    `json:"template_version"`
	Source          string `json:"source"`
	Order           struct {
		OrderID string `json:"order_id"`
	} `json:"order"`
}

// A template with fallback: generic whose regexes find nothing has the
// document read by the generic reader, which succeeds on this PO; the same
// template without the fallback rejects it; and when the reader cannot
// prove a reading either (an invoice), the template's own rejection stands.
func TestFallbackGeneric(t *testing.T) {
	t.Parallel()
	po := mustRead(t, filepath.Join(sharedDir(t), "corpus", "orders", "contoso-po-Adatum-Adel.pdf"))
	invoice := mustRead(t, filepath.Join(sharedDir(t), "corpus", "invoice2data", "tests", "compare", "AmazonWebServices.pdf"))
	b := setup(t, nil)
	b.push(contosoTemplate("contoso-fallback", "  fallback: generic\n"))
	b.push(contosoTemplate("contoso-own", ""))
	b.push(`keywords: [Amazon Web Services]
fields:
  order_id: {parser: regex, regex: 'Order number: (\d+)'}
docintake:
  name: aws-fallback
  fallback: generic
`)
	for _, n := range []string{"contoso-fallback", "contoso-own", "aws-fallback"} {
		b.waitServed(n)
	}
	b.start()

	own := b.waitState(b.upload(po, docOpts{template: "contoso-own"}), document.StateProcessedRejected, 60*time.Second)
	require.Equal(t, document.ReasonDocumentIDMissing, own.StatusReason, "the template alone finds no order id")
	inv := b.waitState(b.upload(invoice, docOpts{template: "aws-fallback"}), document.StateProcessedRejected, 60*time.Second)
	require.Equal(t, document.ReasonDocumentIDMissing, inv.StatusReason, "the template's own rejection stands")
	var detail string
	for _, e := range b.events(inv) {
		if e.To == document.StateProcessedRejected {
			detail = e.Detail
		}
	}
	require.Contains(t, detail, "; fallback generic: ", "the reader's verdict is kept for the template's author")

	// The part that needs the reader to read this PO.
	d := b.waitDone(b.upload(po, docOpts{template: "contoso-fallback"}))
	require.Equal(t, document.StateProcessedSuccess, d.State, "reason %s", d.StatusReason)
	var res genericResult
	require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
	require.Equal(t, "contoso-fallback", res.Template, "the document keeps its template")
	require.Equal(t, 1, res.TemplateVersion)
	require.Contains(t, res.Source, "read by generic (fallback of contoso-fallback)")
	// As printed: PO # 190122, DATE 7/27/2019, 89 × 62.00 and 11 × 22.00.
	o, err := opentrans.Read(bytes.NewReader(b.read(d.ResultPath)))
	require.NoError(t, err)
	require.Equal(t, "190122", o.ID)
	require.Equal(t, "2019-07-27", o.IssueDate.String())
	require.Len(t, o.Items, 2)
	require.Equal(t, []string{"89", "11"}, []string{o.Items[0].Quantity, o.Items[1].Quantity})
	require.Equal(t, []string{"5518.00", "242.00"}, []string{o.Items[0].LineAmount, o.Items[1].LineAmount})

}

// A document uploaded with the built-in template generic is pinned to it
// without a version and read by the generic reader; the result JSON says
// so.
func TestTemplateGenericPinned(t *testing.T) {
	t.Parallel()
	po := mustRead(t, filepath.Join(sharedDir(t), "corpus", "orders", "contoso-po-Adatum-Adel.pdf"))
	b := setup(t, nil)
	b.start()
	// Read by the reader whatever its verdict on this PDF: the pin does
	// not depend on it.
	d := b.waitDone(b.upload(po, docOpts{template: "generic"}))
	atts, err := b.st.Attempts(t.Context(), d.ID)
	require.NoError(t, err)
	require.Len(t, atts, 1)
	require.Equal(t, "generic", atts[0].Name)
	require.Zero(t, atts[0].TemplateID)
	require.Zero(t, atts[0].Version)
	var pinned bool
	for _, e := range b.events(d) {
		pinned = pinned || e.Detail == "attempt 1: built-in template generic"
	}
	require.True(t, pinned, "the pin is recorded in the history")

	require.Equal(t, document.StateProcessedSuccess, d.State, "reason %s", d.StatusReason)
	var res genericResult
	require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
	require.Equal(t, "generic", res.Template)
	require.Zero(t, res.TemplateVersion)
	require.True(t, strings.HasSuffix(res.Source, " read by generic"), res.Source)
	require.Equal(t, "190122", res.Order.OrderID)
}
