package processor

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// Duplicates and revisions (issue 28): a buyer e-mails the same PO twice,
// or sends it again with one quantity changed. Delivered as two ORDERs, the
// ERP creates two sales orders. So an order that would be delivered as
// success is compared with the latest delivery of the same PO (client,
// buyer, order id) within the client's window: the same canonical content is
// ignored as a duplicate, different content is delivered as an ORDERCHANGE
// with the next sequence number. PostgreSQL's primary key on the PO decides
// between copies processed at the same moment (store.DeliverPO).

// poAttempts bounds how often a delivery is decided anew because another
// document of the same PO was delivered meanwhile; each loss means another
// document won, so more than a few in a row is a storm worth a retry later.
const poAttempts = 4

// maxChanges bounds the changes a revision's history line lists.
const maxChanges = 50

// poIdentity is the PO an order belongs to; ok is false for documents that
// are not orders (order responses, changes read from an attachment).
func poIdentity(doc document.Document, v *catalogue.Version, o *order.Order) (store.POIdentity, bool) {
	if o == nil || o.Type != order.TypeOrder || strings.TrimSpace(o.ID) == "" {
		return store.POIdentity{}, false
	}
	return store.POIdentity{ClientID: doc.ClientID, Buyer: poBuyer(doc, v, o), OrderID: normText(o.ID)}, true
}

// poBuyer is the buyer of a PO: the party the upload named, the template's
// first party id (a template is one buyer's layout), the buyer id read from
// the order, else the template's name.
func poBuyer(doc document.Document, v *catalogue.Version, o *order.Order) string {
	if doc.PartyID != "" {
		return doc.PartyID
	}
	if v != nil && v.Template != nil && len(v.Template.DocIntake.PartyIDs) > 0 {
		return v.Template.DocIntake.PartyIDs[0]
	}
	if p, ok := o.Party(order.RoleBuyer); ok && normText(p.ID) != "" {
		return normText(p.ID)
	}
	return doc.Template
}

// poKind is what a delivery of a PO is.
type poKind int

const (
	poOriginal  poKind = iota // the first delivery (or the first after the window): ORDER
	poRevision                // changed content: ORDERCHANGE
	poDuplicate               // same content as the latest delivery: ignored
	poAgain                   // the latest delivery's own document, reprocessed
)

// poDecision is how one document of a PO is delivered.
type poDecision struct {
	kind poKind
	prev *store.PODelivery // the latest delivery (nil: none)
	next store.PODelivery  // what is recorded (not for duplicates)
}

// decidePO compares doc's canonical order (sum, canonical) with the PO's
// latest delivery prev (found false: none).
func decidePO(doc document.Document, id store.POIdentity, sum, canonical []byte, prev store.PODelivery, found bool) poDecision {
	next := store.PODelivery{POIdentity: id, ContentSHA256: sum, Canonical: canonical, DocumentID: doc.ID,
		LogID: doc.LogID, FirstLogID: doc.LogID}
	if !found {
		return poDecision{kind: poOriginal, next: next}
	}
	d := poDecision{prev: &prev, next: next}
	switch {
	case prev.DocumentID == doc.ID:
		d.kind, d.next.Revision, d.next.FirstLogID = poAgain, prev.Revision, prev.FirstLogID
	case !prev.Live:
		d.kind = poOriginal
	case string(prev.ContentSHA256) == string(sum):
		d.kind = poDuplicate
	default:
		d.kind, d.next.Revision, d.next.FirstLogID = poRevision, prev.Revision+1, prev.FirstLogID
	}
	return d
}

// deliverOrder delivers a successful order once per PO content: the hook of
// handle's success outcome.
func (w *worker) deliverOrder(ctx context.Context, log *zap.Logger, doc document.Document, v *catalogue.Version, res *result) error {
	id, ok := poIdentity(doc, v, res.order)
	if !ok {
		return w.succeed(ctx, log, doc, res)
	}
	canonical, err := canonicalJSON(res.order)
	if err != nil {
		w.metrics.job(outRetry)
		return fmt.Errorf("canonical order: %w", err)
	}
	sum := sha256.Sum256(canonical)
	orderXML := res.xml // the ORDER process rendered
	for range poAttempts {
		prev, found, err := w.st.LatestPO(ctx, id)
		if err != nil {
			w.metrics.job(outRetry)
			return err
		}
		d := decidePO(doc, id, sum[:], canonical, prev, found)
		if d.kind == poDuplicate {
			return w.duplicate(ctx, log, doc, res, d)
		}
		c, err := w.poResult(ctx, doc, res, orderXML, d)
		if err != nil {
			w.metrics.job(outRetry)
			return err
		}
		if _, err := w.st.DeliverPO(ctx, d.next, d.prev, c); errors.Is(err, store.ErrPOMoved) {
			log.Info("purchase order delivered by another document meanwhile: deciding again", zap.String("order_id", id.OrderID))
			continue
		} else if err != nil {
			return w.transitionFailed(log, err)
		}
		w.metrics.job(outSuccess)
		log.Info("document processed", zap.Stringer("state", c.To), zap.String("detail", c.Detail))
		return nil
	}
	w.metrics.job(outRetry)
	return fmt.Errorf("order %s of buyer %s: delivered by other documents %d times while deciding", id.OrderID, id.Buyer, poAttempts)
}

// poResult renders and stores the results of decision d (an ORDERCHANGE for
// a revision) and returns the success change to commit with it.
func (w *worker) poResult(ctx context.Context, doc document.Document, res *result, orderXML []byte, d poDecision) (store.Change, error) {
	res.xml = orderXML
	detail := res.outcome.Detail
	if d.next.Revision > 0 {
		note, err := revisionNote(d)
		if err != nil {
			return store.Change{}, err
		}
		change := *res.order
		change.Type = order.TypeOrderChange
		change.Remarks = append(append([]string(nil), change.Remarks...), note)
		// The order rendered as ORDER already, so it renders as ORDERCHANGE.
		if res.xml, err = opentrans.Marshal(&change, opentrans.WriteOptions{GenerationTime: time.Now(),
			ChangeSequence: d.next.Revision}); err != nil {
			return store.Change{}, fmt.Errorf("render order %s as ORDERCHANGE: %w", d.next.OrderID, err)
		}
		detail = note + "; " + detail
	}
	c, err := w.putResults(ctx, doc, res)
	if err != nil {
		return store.Change{}, err
	}
	c.Detail = detail
	c.DocumentID, c.From, c.Actor = doc.ID, doc.State, actor
	c.Outbox = append(c.Outbox, w.deliverJob(ctx, doc, c.To))
	return c, nil
}

// revisionNote is the history's (and the ORDERCHANGE's remark's) account
// of a revision: which delivery it changes and what, line by line.
func revisionNote(d poDecision) (string, error) {
	if d.kind == poAgain {
		return fmt.Sprintf("revision %d of order %s (buyer %s), delivered again", d.next.Revision, d.next.OrderID,
			d.next.Buyer), nil
	}
	// Both sides canonical: "10.00" and "10" are no change.
	var prev, cur order.Order
	if err := json.Unmarshal(d.prev.Canonical, &prev); err != nil {
		return "", fmt.Errorf("read order %s's earlier delivery %s: %w", d.next.OrderID, d.prev.LogID, err)
	}
	if err := json.Unmarshal(d.next.Canonical, &cur); err != nil {
		return "", fmt.Errorf("read order %s: %w", d.next.OrderID, err)
	}
	what := "no change in the compared values"
	changes := diffOrders(&prev, &cur)
	if len(changes) > maxChanges { // a new order under an old number: the count says enough
		changes = append(changes[:maxChanges], fmt.Sprintf("and %d more changes", len(changes)-maxChanges))
	}
	if len(changes) > 0 {
		what = strings.Join(changes, "; ")
	}
	return fmt.Sprintf("revision %d of order %s (buyer %s), changes %s: %s",
		d.next.Revision, d.next.OrderID, d.next.Buyer, d.prev.LogID, what), nil
}

// duplicate ignores doc as a copy of the PO's latest delivery. Results a
// lost race left behind are removed: the document shows none.
func (w *worker) duplicate(ctx context.Context, log *zap.Logger, doc document.Document, res *result, d poDecision) error {
	for _, ext := range []string{"xml", "json"} {
		key := objectstore.ResultKey(doc.LogID, doc.CreatedAt, ext)
		if err := w.objects.Delete(ctx, key); err != nil {
			log.Warn("result of a duplicate not removed", zap.String("key", key), zap.Error(err))
		}
	}
	detail := fmt.Sprintf("duplicate of %s (order %s of buyer %s, same content, delivered %s); %s", d.prev.LogID,
		d.prev.OrderID, d.prev.Buyer, d.prev.DeliveredAt.UTC().Format(time.RFC3339), res.outcome.Detail)
	return w.finish(ctx, log, doc, store.Change{To: document.StateProcessedIgnored, Reason: noReason(),
		Detail: detail, DocumentDate: res.date()}, outIgnored)
}

// canonicalJSON is the order as compared for duplicates: the business
// content (parties and addresses, dates, currency, lines with quantities
// and prices, totals, payment terms) with whitespace and decimal notation
// normalised, and without what differs between two prints of one PO
// (remarks, the detected language).
func canonicalJSON(o *order.Order) ([]byte, error) {
	c := *o
	c.Remarks, c.Language = nil, ""
	c.ID, c.Currency, c.BuyerOrderID, c.PaymentTerms = normText(c.ID), normText(c.Currency), normText(c.BuyerOrderID), normText(c.PaymentTerms)
	c.Parties = make([]order.Party, len(o.Parties))
	for i, p := range o.Parties {
		c.Parties[i] = canonicalParty(p)
	}
	c.Items = make([]order.Item, len(o.Items))
	for i, it := range o.Items {
		c.Items[i] = canonicalItem(it)
	}
	t := &c.Totals
	for _, f := range []*string{&t.NetAmount, &t.TaxAmount, &t.GrossAmount, &t.LinesAmount, &t.Charges, &t.Allowances,
		&t.ExtraCharges, &t.Quantity} {
		*f = normDecimal(*f)
	}
	return json.Marshal(&c)
}

func canonicalParty(p order.Party) order.Party {
	p.ID, p.IDType, p.VATID = normText(p.ID), normText(p.IDType), normText(p.VATID)
	a := &p.Address
	for _, f := range []*string{&a.Name, &a.Name2, &a.Contact, &a.Street, &a.Zip, &a.City, &a.State, &a.Country,
		&a.CountryCoded, &a.Phone, &a.Email} {
		*f = normText(*f)
	}
	lines := make([]string, 0, len(a.Lines))
	for _, l := range a.Lines {
		if l = normText(l); l != "" {
			lines = append(lines, l)
		}
	}
	a.Lines = lines
	p.OtherIDs = append([]order.PartyID(nil), p.OtherIDs...)
	return p
}

func canonicalItem(it order.Item) order.Item {
	it.Remarks = nil
	for _, f := range []*string{&it.Position, &it.SupplierArticleID, &it.BuyerArticleID, &it.EAN, &it.Description,
		&it.LongDescription, &it.Unit} {
		*f = normText(*f)
	}
	for _, f := range []*string{&it.Quantity, &it.UnitPrice, &it.PriceBasisQuantity, &it.LineAmount, &it.TaxRate,
		&it.DiscountPercent, &it.DiscountAmount} {
		*f = normDecimal(*f)
	}
	if it.PriceBasisQuantity == "" {
		it.PriceBasisQuantity = "1" // "" means 1
	}
	return it
}

// normText collapses runs of white space.
func normText(s string) string { return strings.Join(strings.Fields(s), " ") }

// normDecimal writes a canonical decimal without trailing fractional
// zeros, so that "10.00" and "10" are the same quantity.
func normDecimal(s string) string {
	s = normText(s)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}
