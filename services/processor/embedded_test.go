package processor_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/embedded/embeddedtest"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/stretchr/testify/require"
)

// Every invoice of the shared corpus carries its XML; through the processor
// (real PostgreSQL, JetStream and S3) every order template rejects it
// not_an_order, and the event says the attachment decided.
func TestCorpusInvoicesRejected(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(sharedDir(t), "corpus", "other", "*.pdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	b := setup(t, nil)
	b.start()
	type upload struct {
		file, template string
		doc            document.Document
	}
	var ups []upload
	for _, f := range files {
		for _, tpl := range []string{"acme", "contoso-po", "orderx-comfort", "embedded"} {
			ups = append(ups, upload{f, tpl, b.upload(mustRead(t, f), docOpts{template: tpl})})
		}
	}
	for _, u := range ups {
		d := b.waitState(u.doc, document.StateProcessedRejected, 60*time.Second)
		require.Equal(t, document.ReasonNotAnOrder, d.StatusReason, "%s with %s", filepath.Base(u.file), u.template)
		ev := b.events(d)
		require.Contains(t, ev[len(ev)-1].Detail, "source: embedded ", "%s with %s", filepath.Base(u.file), u.template)
		require.Contains(t, ev[len(ev)-1].Detail, " invoice (", "%s with %s", filepath.Base(u.file), u.template)
	}
}

// An Order-X attachment added to a Contoso PO wins over its printed text
// for the Contoso template; the result JSON and the event name the source.
// A hostile attachment leaves the text in charge, and a PDF without a
// structured order is rejected unknown_format by the embedded template.
func TestEmbeddedOrderWinsOverText(t *testing.T) {
	t.Parallel()
	orders := filepath.Join(sharedDir(t), "corpus", "orders")
	contoso := mustRead(t, filepath.Join(orders, "contoso-po-Adatum-Adel.pdf"))
	orderX := embeddedtest.Detach(t, filepath.Join(orders, "orderx-ex01-order-comfort.pdf"), 1)
	withOrderX := embeddedtest.Attach(t, contoso, []string{"order-x.xml"}, map[string][]byte{"order-x.xml": orderX})
	hostile := embeddedtest.Hostile()
	withBomb := embeddedtest.Attach(t, contoso, []string{"entity-expansion.xml", "deep-nesting.xml"}, hostile)

	b := setup(t, nil)
	b.start()
	xmlWins := b.upload(withOrderX, docOpts{template: "contoso-po"})
	textOnly := b.upload(withBomb, docOpts{template: "contoso-po"})
	noOrder := b.upload(withBomb, docOpts{template: "embedded"})

	d := b.waitState(xmlWins, document.StateProcessedSuccess, 60*time.Second)
	xml := b.read(d.ResultPath)
	opentranstest.Validate(t, xml)
	o, err := opentrans.Read(strings.NewReader(string(xml)))
	require.NoError(t, err)
	require.Equal(t, "PO123456789", o.ID, "the attachment's order id, not the printed 190122")
	require.Len(t, o.Items, 3)
	var res struct {
		Source string `json:"source"`
		Order  struct {
			Parties []struct {
				Role     string `json:"role"`
				OtherIDs []struct {
					ID, Type string
				} `json:"other_ids"`
			} `json:"parties"`
		} `json:"order"`
	}
	require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
	require.Equal(t, "embedded Order-X COMFORT (order-x.xml)", res.Source)
	require.Equal(t, "buyer", res.Order.Parties[0].Role)
	// order-x.xml: the buyer's GLN (GlobalID scheme 0088) and its legal
	// registration (SIREN, scheme 0002), read off the file.
	require.Len(t, res.Order.Parties[0].OtherIDs, 2)
	require.Equal(t, "98765432179", res.Order.Parties[0].OtherIDs[0].ID)
	require.Equal(t, "gln", res.Order.Parties[0].OtherIDs[0].Type)
	require.Equal(t, "987654321", res.Order.Parties[0].OtherIDs[1].ID)
	ev := b.events(d)
	// The Order-X's requested delivery (2020-04-15) is long past, so the
	// detail also carries that flag (docs/orders.md); the source ends it.
	require.True(t, strings.HasSuffix(ev[len(ev)-1].Detail, "; source: embedded Order-X COMFORT (order-x.xml)"), ev[len(ev)-1].Detail)
	require.Contains(t, ev[len(ev)-1].Detail, "delivery_date_past")

	d = b.waitState(textOnly, document.StateProcessedSuccess, 60*time.Second)
	o, err = opentrans.Read(strings.NewReader(string(b.read(d.ResultPath))))
	require.NoError(t, err)
	require.Equal(t, "190122", o.ID, "printed on the Contoso PO")
	require.NoError(t, json.Unmarshal(b.read(d.ResultJSONPath), &res))
	require.Equal(t, "text (pdftotext)", res.Source)

	d = b.waitState(noOrder, document.StateProcessedRejected, 60*time.Second)
	require.Equal(t, document.ReasonUnknownFormat, d.StatusReason)
}
