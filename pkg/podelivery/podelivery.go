// Package podelivery decides how an order that is to be delivered as a
// success relates to the deliveries of its purchase order (issue 28): a
// buyer e-mails the same PO twice, or sends it again with one quantity
// changed, and delivered as two ORDERs the ERP would create two sales
// orders. An order is compared with the latest delivery of the same PO
// (client, buyer, order id) within the client's window: the same canonical
// content is a duplicate (ignored), other content a revision (an
// ORDERCHANGE with the next sequence number, or per client an ORDER marked
// as a revision in its remarks). The processor and an approval in review
// (pkg/lifecycle) both decide here, and both record the delivery in the
// transaction that commits it, where PostgreSQL's primary key on the PO
// decides between deliveries made at the same moment (store.DeliverPO,
// store.ApproveReviewPO).
package podelivery

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/store"
)

// attempts bounds how often a delivery is decided anew because another
// document of the same PO was delivered meanwhile; each loss means another
// document won, so more than a few in a row is a storm worth a retry later.
const attempts = 4

// Buyer is the buyer of a PO: the party the upload named, the template's
// first party id (a template is one buyer's layout), the buyer id read from
// the order, else the template's name. Price lists are kept per this buyer
// too.
func Buyer(doc document.Document, v *catalogue.Version, o *order.Order) string {
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

// PO is a document's order as the duplicate check compares it.
type PO struct {
	ID        store.POIdentity
	Canonical []byte // Canonical of the order
	Sum       []byte // its SHA-256
}

// Prepare returns the PO doc's order o belongs to; ok is false for
// documents that are not orders (order responses, changes read from an
// attachment) or carry no order id: they are delivered as they are.
func Prepare(doc document.Document, v *catalogue.Version, o *order.Order) (po PO, ok bool, err error) {
	if o == nil || o.Type != order.TypeOrder || strings.TrimSpace(o.ID) == "" {
		return PO{}, false, nil
	}
	canonical, err := Canonical(o)
	if err != nil {
		return PO{}, false, fmt.Errorf("canonical order: %w", err)
	}
	sum := sha256.Sum256(canonical)
	id := store.POIdentity{ClientID: doc.ClientID, Buyer: Buyer(doc, v, o), OrderID: normText(o.ID)}
	return PO{ID: id, Canonical: canonical, Sum: sum[:]}, true, nil
}

// Kind is what a delivery of a PO is.
type Kind int

// Kind values.
const (
	Original  Kind = iota // the first delivery (or the first after the window): ORDER
	Revision              // changed content: ORDERCHANGE, or an ORDER marked as a revision
	Duplicate             // same content as the latest delivery: ignored
	Again                 // the latest delivery's own document, delivered again as what it was
)

// Decision is how one document of a PO is delivered.
type Decision struct {
	Kind Kind
	Prev *store.PODelivery // the PO's latest delivery (nil: none)
	Next store.PODelivery  // what is recorded (not for duplicates)
}

// Decide compares po, doc's order, with the PO's latest delivery prev
// (found false: none).
func Decide(doc document.Document, po PO, prev store.PODelivery, found bool) Decision {
	next := store.PODelivery{POIdentity: po.ID, ContentSHA256: po.Sum, Canonical: po.Canonical, DocumentID: doc.ID,
		LogID: doc.LogID, FirstLogID: doc.LogID}
	if !found {
		return Decision{Kind: Original, Next: next}
	}
	d := Decision{Prev: &prev, Next: next}
	switch {
	case prev.DocumentID == doc.ID:
		d.Kind, d.Next.Revision, d.Next.FirstLogID = Again, prev.Revision, prev.FirstLogID
	case !prev.Live:
		d.Kind = Original
	case string(prev.ContentSHA256) == string(po.Sum):
		d.Kind = Duplicate
	default:
		d.Kind, d.Next.Revision, d.Next.FirstLogID = Revision, prev.Revision+1, prev.FirstLogID
	}
	return d
}

// Latest decides po against the PO's latest delivery as it is now.
func Latest(ctx context.Context, st *store.Store, doc document.Document, po PO) (Decision, error) {
	prev, found, err := st.LatestPO(ctx, po.ID)
	if err != nil {
		return Decision{}, err
	}
	return Decide(doc, po, prev, found), nil
}

// Deliver decides how doc's po is delivered and hands the decision to
// commit, which writes it in one transaction with the PO's record
// (store.DeliverPO, store.ApproveReviewPO; a duplicate records nothing).
// When commit fails with store.ErrPOMoved, another document of the PO was
// delivered between the read and the write, and the decision is made again
// against that delivery. Other errors are commit's.
func Deliver(ctx context.Context, st *store.Store, doc document.Document, po PO, commit func(Decision) error) error {
	for range attempts {
		d, err := Latest(ctx, st, doc, po)
		if err != nil {
			return err
		}
		if err := commit(d); !errors.Is(err, store.ErrPOMoved) {
			return err
		}
	}
	return fmt.Errorf("order %s of buyer %s: delivered by other documents %d times while deciding", po.ID.OrderID,
		po.ID.Buyer, attempts)
}

// DuplicateDetail is the history's account of a duplicate: "duplicate of
// <log_id> (…)".
func (d Decision) DuplicateDetail() string {
	return fmt.Sprintf("duplicate of %s (order %s of buyer %s, same content, delivered %s)", d.Prev.LogID,
		d.Prev.OrderID, d.Prev.Buyer, d.Prev.DeliveredAt.UTC().Format(time.RFC3339))
}
