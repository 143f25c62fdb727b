package lifecycle

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/podelivery"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
)

// An approved order is delivered as the processor would have delivered it
// (issue 28): an approval that skipped the PO's duplicate and revision
// decision would send a second ORDER for a PO the ERP already has, and
// leave the PO unrecorded so that its next copy is held again.

// deliver commits the approved order o (its result JSON res, the event's
// detail) through its PO's decision (pkg/podelivery), recording the PO in
// the approval's transaction; an order that is no PO (no order id, an
// order response) is approved as it is.
func (r Review) deliver(ctx context.Context, d document.Document, v *catalogue.Version, o *order.Order,
	res resultjson.File, detail, who string) (document.Document, error) {
	xml, err := opentrans.Marshal(o, opentrans.WriteOptions{GenerationTime: time.Now()})
	if err != nil {
		return d, document.Errorf(document.EINVALID, "openTRANS of the corrected order: %v", err)
	}
	po, ok, err := podelivery.Prepare(d, v, o)
	if err != nil || !ok {
		if err != nil {
			return d, err
		}
		return r.Store.ApproveReview(ctx, d.ID, r.success(ctx, o, xml, res, detail, who))
	}
	out := d
	err = podelivery.Deliver(ctx, r.Store, d, po, func(dec podelivery.Decision) error {
		var err error
		if dec.Kind == podelivery.Duplicate {
			out, err = r.Store.ApproveReview(ctx, d.ID, r.ignored(ctx, o, dec, detail, who))
			return err
		}
		rev, note, err := podelivery.Render(ctx, r.Store, o, dec, time.Now())
		if err != nil {
			return err
		}
		x, dt := xml, detail
		if rev != nil { // a revision, as the client takes it
			x, dt = rev, note+"; "+detail
		}
		out, err = r.Store.ApproveReviewPO(ctx, d.ID, dec.Next, dec.Prev, r.success(ctx, o, x, res, dt, who))
		return err
	})
	return out, err
}

// success builds the approval's processed_success with its results (xml,
// res) and deliver job.
func (r Review) success(ctx context.Context, o *order.Order, xml []byte, res resultjson.File, detail, who string) func(document.Document) (store.Change, error) {
	return func(d document.Document) (store.Change, error) {
		c, err := r.putResults(ctx, d, o, xml, res)
		if err != nil {
			return c, err
		}
		c.From, c.To, c.Actor, c.Detail = document.StateProcessedRejected, document.StateProcessedSuccess, who, detail
		c.Outbox = []store.OutboxRow{DeliverJob(ctx, r.Prefix, withState(d, document.StateProcessedSuccess), NewDeliveryID())}
		return c, nil
	}
}

// ignored builds the approval of a copy of the PO's latest delivery: it is
// ignored as its duplicate (the client hears of it as of any ignored
// document, where the template asks for feedback), as the processor
// ignores a copy, rather than delivered a second time or refused: the
// order is in the ERP already, and refusing would leave the operator only
// the release, which tells the client "rejected".
func (r Review) ignored(ctx context.Context, o *order.Order, dec podelivery.Decision, detail, who string) func(document.Document) (store.Change, error) {
	return func(d document.Document) (store.Change, error) {
		clear := document.Reason("")
		return store.Change{From: document.StateProcessedRejected, To: document.StateProcessedIgnored, Reason: &clear,
			Actor: who, DocumentDate: documentDate(o),
			Detail: dec.DuplicateDetail() + "; " + detail + "; ignored, not delivered again",
			Outbox: []store.OutboxRow{DeliverJob(ctx, r.Prefix, withState(d, document.StateProcessedIgnored), NewDeliveryID())}}, nil
	}
}
