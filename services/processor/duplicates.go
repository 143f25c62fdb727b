package processor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/podelivery"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// Duplicates and revisions (issue 28): an order that would be delivered as
// success is compared with the latest delivery of its PO; pkg/podelivery
// decides (the approval in review decides there too). Here the decision is
// carried out: a duplicate is ignored, a revision rendered as the client
// takes it, and the delivery recorded in the success's transaction.

// deliverOrder delivers a successful order once per PO content: the hook of
// handle's success outcome.
func (w *worker) deliverOrder(ctx context.Context, log *zap.Logger, doc document.Document, v *catalogue.Version, res *result) error {
	po, ok, err := podelivery.Prepare(doc, v, res.order)
	if err != nil {
		w.metrics.job(outRetry)
		return err
	}
	if !ok {
		return w.succeed(ctx, log, doc, res)
	}
	orderXML := res.xml // the ORDER process rendered
	settled := false    // the outcome is counted
	err = podelivery.Deliver(ctx, w.st, doc, po, func(d podelivery.Decision) error {
		if d.Kind == podelivery.Duplicate {
			settled = true
			return w.duplicate(ctx, log, doc, res, d)
		}
		c, err := w.poResult(ctx, doc, res, orderXML, d)
		if err != nil {
			return err
		}
		if _, err := w.st.DeliverPO(ctx, d.Next, d.Prev, c); errors.Is(err, store.ErrPOMoved) {
			log.Info("purchase order delivered by another document meanwhile: deciding again", zap.String("order_id", po.ID.OrderID))
			return err
		} else if err != nil {
			settled = true
			return w.transitionFailed(log, err)
		}
		settled = true
		w.metrics.job(outSuccess)
		log.Info("document processed", zap.Stringer("state", c.To), zap.String("detail", c.Detail))
		return nil
	})
	if err != nil && !settled {
		w.metrics.job(outRetry)
	}
	return err
}

// poResult renders and stores the results of decision d (a revision as
// the client takes it) and returns the success change to commit with it.
func (w *worker) poResult(ctx context.Context, doc document.Document, res *result, orderXML []byte, d podelivery.Decision) (store.Change, error) {
	res.xml = orderXML
	detail := res.outcome.Detail
	xml, note, err := podelivery.Render(ctx, w.st, res.order, d, time.Now())
	if err != nil {
		return store.Change{}, err
	}
	if xml != nil {
		res.xml, detail = xml, note+"; "+detail
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

// duplicate ignores doc as a copy of the PO's latest delivery. Results a
// lost race left behind are removed: the document shows none.
func (w *worker) duplicate(ctx context.Context, log *zap.Logger, doc document.Document, res *result, d podelivery.Decision) error {
	for _, ext := range []string{"xml", "json"} {
		key := objectstore.ResultKey(doc.LogID, doc.CreatedAt, ext)
		if err := w.objects.Delete(ctx, key); err != nil {
			log.Warn("result of a duplicate not removed", zap.String("key", key), zap.Error(err))
		}
	}
	return w.finish(ctx, log, doc, store.Change{To: document.StateProcessedIgnored, Reason: noReason(),
		Detail: d.DuplicateDetail() + "; " + res.outcome.Detail, DocumentDate: res.date()}, outIgnored)
}

// duplicateOf reports whether the order is a copy of its PO's latest
// delivery, with the decision that says so.
func (w *worker) duplicateOf(ctx context.Context, doc document.Document, v *catalogue.Version, res *result) (podelivery.Decision, bool, error) {
	po, ok, err := podelivery.Prepare(doc, v, res.order)
	if err != nil || !ok {
		return podelivery.Decision{}, false, err
	}
	d, err := podelivery.Latest(ctx, w.st, doc, po)
	if err != nil {
		return d, false, fmt.Errorf("latest delivery of order %s: %w", po.ID.OrderID, err)
	}
	return d, d.Kind == podelivery.Duplicate, nil
}
