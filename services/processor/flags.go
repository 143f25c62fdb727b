package processor

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/orderflags"
	"github.com/docintake/docintake/pkg/podelivery"
	"github.com/docintake/docintake/pkg/pricing"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// Flags (issue 28): an order read exactly can still be one the supplier
// cannot act on as printed: last year's price, a delivery date before the
// order date or already past. Each such finding is a flag with the
// expected and the printed value; nothing is corrected. Per client
// (clients.flags) a flagged order is delivered with its flags in the
// openTRANS line's REMARKS and the result JSON's flags, or held for review
// as a rejection a person approves (issue 27).

// maxFlagDetails bounds the flags a history line spells out.
const maxFlagDetails = 20

// flagOrder checks a successful order's prices and delivery dates and
// records what it finds. held reports that the order was held for review
// (or ignored as a duplicate of a delivered one) and needs nothing more;
// else res carries the flags for its delivery. attempt is the document's
// processing attempt.
func (w *worker) flagOrder(ctx context.Context, log *zap.Logger, doc document.Document, attempt int, v *catalogue.Version, res *result) (held bool, err error) {
	o := res.order
	if o == nil || (o.Type != order.TypeOrder && o.Type != order.TypeOrderChange) {
		return false, nil
	}
	flags, policy, err := w.checkOrder(ctx, doc, v, o)
	if err != nil {
		w.metrics.job(outRetry)
		return true, err
	}
	if len(flags) == 0 {
		return false, nil
	}
	rows := make([]store.DocumentFlag, len(flags))
	for i, f := range flags {
		rows[i] = store.DocumentFlag{Kind: f.Kind, Line: f.Line, Position: f.Position, Article: f.Article,
			Expected: f.Expected, Printed: f.Printed, Message: f.Message}
	}
	if err := w.st.PutDocumentFlags(ctx, doc.ID, attempt, rows); err != nil {
		w.metrics.job(outRetry)
		return true, err
	}
	for _, f := range flags {
		w.metrics.flags.WithLabelValues(f.Kind).Inc()
	}
	orderflags.Apply(o, flags)
	res.outcome.Detail = flagDetail(flags) + "; " + res.outcome.Detail
	if policy == document.FlagsReview {
		return true, w.holdFlagged(ctx, log, doc, v, res, flags)
	}
	if err := w.renderFlagged(doc, v, res, flags); err != nil {
		w.metrics.job(outRetry)
		return true, err
	}
	log.Info("order flagged", zap.Int("flags", len(flags)))
	return false, nil
}

// checkOrder returns o's flags and the client's policy for them. The price
// list is read (one statement, with the policy) only when a line has a
// price to check or a date is flagged.
func (w *worker) checkOrder(ctx context.Context, doc document.Document, v *catalogue.Version, o *order.Order) ([]orderflags.Flag, document.FlagPolicy, error) {
	flags := orderflags.Dates(o, doc.CreatedAt)
	articles := orderflags.Articles(o)
	if len(flags) == 0 && len(articles) == 0 {
		return nil, "", nil
	}
	policy, rows, err := w.st.PriceCheck(ctx, doc.ClientID, podelivery.Buyer(doc, v, o), articles)
	if err != nil {
		return nil, "", fmt.Errorf("price list of client %s: %w", doc.ClientID, err)
	}
	return append(flags, orderflags.Prices(o, pricing.Entries(rows), doc.CreatedAt)...), policy, nil
}

// flagDetail is the history's account of the flags.
func flagDetail(flags []orderflags.Flag) string {
	msgs := make([]string, 0, min(len(flags), maxFlagDetails+1))
	for i, f := range flags {
		if i == maxFlagDetails {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(flags)-maxFlagDetails))
			break
		}
		msgs = append(msgs, f.Kind+": "+f.Message)
	}
	noun := "flags"
	if len(flags) == 1 {
		noun = "flag"
	}
	return fmt.Sprintf("%d %s: %s", len(flags), noun, strings.Join(msgs, "; "))
}

// flaggedResult is the result JSON of a flagged order.
func flaggedResult(doc document.Document, v *catalogue.Version, res *result, flags []orderflags.Flag) resultjson.File {
	f := resultFile(doc, v, res.order, res.source)
	for _, fl := range flags {
		f.Flags = append(f.Flags, resultjson.Flag{Kind: fl.Kind, Line: fl.Line, Position: fl.Position, Article: fl.Article,
			Expected: fl.Expected, Printed: fl.Printed, Message: fl.Message})
	}
	return f
}

// renderFlagged renders the flagged order's openTRANS (with the flags in
// its REMARKS) and result JSON (with its flags) again.
func (w *worker) renderFlagged(doc document.Document, v *catalogue.Version, res *result, flags []orderflags.Flag) error {
	var err error
	if res.xml, err = opentrans.Marshal(res.order, opentrans.WriteOptions{GenerationTime: time.Now()}); err != nil {
		return fmt.Errorf("render flagged order: %w", err)
	}
	if res.json, err = json.MarshalIndent(flaggedResult(doc, v, res, flags), "", "  "); err != nil {
		return fmt.Errorf("encode flagged result: %w", err)
	}
	return nil
}

// holdFlagged holds a flagged order for review (the client's flags:
// review): processed_rejected without a status reason and without its
// deliver job, until an operator approves it (delivered as success, with
// its flags) or releases it, or the client's review timeout delivers the
// rejection. A copy of a PO already delivered with the same content is
// ignored as its duplicate instead: there is nothing to review.
func (w *worker) holdFlagged(ctx context.Context, log *zap.Logger, doc document.Document, v *catalogue.Version, res *result, flags []orderflags.Flag) error {
	if d, dup, err := w.duplicateOf(ctx, doc, v, res); err != nil || dup {
		if err != nil {
			w.metrics.job(outRetry)
			return err
		}
		return w.duplicate(ctx, log, doc, res, d)
	}
	client, err := w.st.Client(ctx, doc.ClientID)
	if err != nil {
		w.metrics.job(outRetry)
		return err
	}
	rd := lifecycle.Reading{Detail: res.outcome.Detail, Canonical: *res.order, Result: flaggedResult(doc, v, res, flags)}
	if err := lifecycle.PutReading(ctx, w.objects, doc, rd); err != nil {
		w.metrics.job(outRetry)
		return err
	}
	until := time.Now().Add(client.ReviewWait())
	c := store.Change{DocumentID: doc.ID, From: doc.State, To: document.StateProcessedRejected, Reason: noReason(), Actor: actor,
		Detail: fmt.Sprintf("%s; held for review until %s (the client's flags: review)", res.outcome.Detail,
			until.UTC().Format(time.RFC3339)), DocumentDate: res.date()}
	if _, err := w.st.HoldForReview(ctx, c, until); err != nil {
		return w.transitionFailed(log, err)
	}
	w.metrics.job(outHeld)
	log.Info("flagged order held for review", zap.Int("flags", len(flags)), zap.Time("until", until))
	return nil
}
