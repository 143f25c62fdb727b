package processor

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// outHeld is the job outcome of a rejection held for review.
const outHeld = "held_for_review"

// holdForReview keeps a rejection a person can fix for an operator when the
// document's client holds for review (issue 27): the document enters
// processed_rejected (the contract's "rejected; the details were not yet
// sent") without its deliver job, marked held until the client's review
// timeout, and what was read is stored for the reviewer
// (lifecycle.ReadingKey). held is false when the rejection takes the usual
// way; err is what handle returns when held.
func (w *worker) holdForReview(ctx context.Context, log *zap.Logger, doc document.Document, v *catalogue.Version, res *result) (held bool, err error) {
	if !fixable(v, res) {
		return false, nil
	}
	client, err := w.st.Client(ctx, doc.ClientID)
	if err != nil {
		w.metrics.job(outRetry)
		return true, err
	}
	if !client.Holds() {
		return false, nil
	}
	o := res.order
	if o == nil {
		o = &order.Order{}
	}
	rd := lifecycle.Reading{Reason: res.outcome.Reason, Detail: res.outcome.Detail, Canonical: *o,
		Result: resultFile(doc, v, o, res.source)}
	if err := lifecycle.PutReading(ctx, w.objects, doc, rd); err != nil {
		w.metrics.job(outRetry)
		return true, err
	}
	until := time.Now().Add(client.ReviewWait())
	r := res.outcome.Reason
	c := store.Change{DocumentID: doc.ID, From: doc.State, To: document.StateProcessedRejected, Reason: &r, Actor: actor,
		Detail: fmt.Sprintf("%s; held for review until %s (the client's review: hold)", res.outcome.Detail,
			until.UTC().Format(time.RFC3339)), DocumentDate: res.date()}
	if _, err := w.st.HoldForReview(ctx, c, until); err != nil {
		return true, w.transitionFailed(log, err)
	}
	w.metrics.job(outHeld)
	log.Info("document held for review", zap.String("detail", c.Detail), zap.Time("until", until))
	return true, nil
}

// fixable reports whether a person could turn the rejection into an order
// by correcting what was read: a missing or unreadable value
// (document.Reason.Fixable), or any uncertainty of the generic reader
// except that the document is not an order.
func fixable(v *catalogue.Version, res *result) bool {
	r := res.outcome.Reason
	if r.Fixable() {
		return true
	}
	switch r {
	case document.ReasonNotAnOrder, document.ReasonNotAnInvoice, document.ReasonNotAnOrderResponse:
		return false
	}
	return v.Builtin() && res.order != nil
}

// resultFile is the result JSON the processor writes for o (marshalResult
// without the encoding).
func resultFile(doc document.Document, v *catalogue.Version, o *order.Order, source string) resultjson.File {
	return resultjson.File{LogID: doc.LogID, MessageID: doc.MessageID, Template: doc.Template,
		TemplateVersion: v.Number, TemplateSHA256: hex.EncodeToString(v.SHA256), TemplateClient: v.ClientID,
		ResultMode: string(doc.ResultMode), Source: source, Order: resultjson.OrderOf(o)}
}

// sweepReviews delivers the rejections whose review timeout passed.
func (w *worker) sweepReviews(ctx context.Context) (int, error) {
	return w.sweepBatches(ctx, "review timeout: released held rejection", func(now time.Time) ([]document.Document, error) {
		return lifecycle.ReleaseTimedOut(ctx, w.st, w.prefix, now, 100)
	})
}

// keepReading stores what was read of a document deferred for a missing
// mapping or unit (lifecycle.ReadingKey, as for a held rejection), so that
// the console's review page can show the unknown keys at the item rows
// that print them and a person can map them there. A failure to store it
// only costs the page those rows (it falls back to the deferral's detail):
// logged, never a reason to fail the job.
func (w *worker) keepReading(ctx context.Context, log *zap.Logger, doc document.Document, v *catalogue.Version, res *result) {
	if res.order == nil {
		return
	}
	rd := lifecycle.Reading{Reason: res.outcome.Reason, Detail: res.outcome.Detail, Canonical: *res.order,
		Result: resultFile(doc, v, res.order, res.source)}
	if err := lifecycle.PutReading(ctx, w.objects, doc, rd); err != nil {
		log.Warn("deferred document: reading not stored for the review page", zap.Error(err))
	}
}
