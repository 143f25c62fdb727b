package processor

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"go.uber.org/zap"
)

// extracted is what routing read of a document (its PDF and layout text),
// which process uses instead of reading and extracting it again.
type extracted struct {
	pdf  []byte
	text *pdftext.Text
	took time.Duration // the extraction's time, for the metric
}

// read returns the PDF routing read, else reads it now.
func (e *extracted) read(ctx context.Context, w *worker, doc document.Document) ([]byte, error) {
	if e != nil {
		return e.pdf, nil
	}
	return w.readSource(ctx, doc)
}

// extract returns the text routing extracted, else extracts it now, with
// the time the extraction took.
func (e *extracted) extract(ctx context.Context, w *worker, pdf []byte) (*pdftext.Text, time.Duration, error) {
	if e != nil && e.text != nil {
		return e.text, e.took, nil
	}
	start := time.Now()
	text, err := w.engine.Extract(ctx, pdf)
	return text, time.Since(start), err
}

// route continues the routing chain (issue 29) for a document stored
// without a template: intake's sender step chose none, so the client's
// templates compete on their keywords in the PDF's text; with no choice the
// generic reader reads it where the client allows (unknown_party: generic);
// otherwise it is rejected unknown_format, or held for review where the
// client holds. It runs inside the job's fair slot and under the template
// budget (INTAKE_TEMPLATE_BUDGET), like the template run that follows. done
// is true when the job is settled (err is then what handle returns);
// otherwise doc names its template and pre holds the text for process.
func (w *worker) route(ctx context.Context, log *zap.Logger, doc document.Document, dl queue.Delivery) (_ document.Document, pre *extracted, done bool, err error) {
	client, err := w.st.Client(ctx, doc.ClientID)
	if err != nil {
		w.metrics.job(outRetry)
		return doc, nil, true, err
	}
	pre, c, v, err := w.compete(ctx, doc)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			return doc, nil, true, w.failed(ctx, log, doc, dl, f)
		}
		w.metrics.job(outRetry)
		return doc, nil, true, err
	}
	var tmpl, detail string
	switch {
	case v != nil:
		tmpl, detail = v.Name, "routed by keywords: "+c.Explain()
	case client.UnknownParty == document.UnknownPartyGeneric:
		tmpl, detail = generic.Name, "routed to the generic reader (the client's unknown_party: generic): keywords: "+c.Explain()
	default:
		return doc, nil, true, w.unrouted(ctx, log, doc, client, c)
	}
	r := store.Route{DocumentID: doc.ID, State: doc.State, Template: tmpl, Actor: actor, Detail: detail}
	if err := w.st.RouteDocument(ctx, r); err != nil {
		return doc, nil, true, w.transitionFailed(log, err)
	}
	log.Info("document routed", zap.String("template", tmpl), zap.String("detail", detail))
	doc.Template = tmpl
	return doc, pre, false, nil
}

// compete reads the PDF, extracts its text and runs the keyword
// competition among the client's templates. Problems of the document or a
// template (unreadable PDF, the budget spent, a panic) are a *failure.
func (w *worker) compete(ctx context.Context, doc document.Document) (pre *extracted, c template.Competition, v *catalogue.Version, err error) {
	defer func() {
		if r := recover(); r != nil {
			pre, v, err = nil, nil, &failure{"routing", fmt.Errorf("%v\n%s", r, debug.Stack())}
		}
	}()
	pdf, err := w.readSource(ctx, doc)
	if err != nil {
		return nil, c, nil, err
	}
	pre = &extracted{pdf: pdf}
	if pre.text, pre.took, err = pre.extract(ctx, w, pdf); err != nil {
		if ctx.Err() != nil {
			return nil, c, nil, err
		}
		return nil, c, nil, &failure{"extract", err}
	}
	c, v, err = w.templates.Compete(ctx, doc.ClientID, pre.text.String(), w.budget)
	if err != nil {
		if ctx.Err() != nil {
			return nil, c, nil, err
		}
		return nil, c, nil, &failure{"routing", err}
	}
	return pre, c, v, nil
}

// unrouted settles a document no step of the chain found a template for:
// rejected unknown_format with the reason, or held for review (with
// nothing read) where the client holds.
func (w *worker) unrouted(ctx context.Context, log *zap.Logger, doc document.Document, client document.Client, c template.Competition) error {
	reason := document.ReasonUnknownFormat
	detail := fmt.Sprintf("not routed: no sender mapping chose a template; keywords: %s; the generic reader is not allowed (the client's unknown_party: %s)",
		c.Explain(), document.UnknownPartyReject)
	if !client.Holds() {
		return w.finish(ctx, log, doc, store.Change{To: document.StateProcessedRejected, Reason: &reason, Detail: detail}, outRejected)
	}
	rd := lifecycle.Reading{Reason: reason, Detail: detail,
		Result: resultjson.File{LogID: doc.LogID, MessageID: doc.MessageID, ResultMode: string(doc.ResultMode),
			Order: resultjson.OrderOf(&order.Order{})}}
	if err := lifecycle.PutReading(ctx, w.objects, doc, rd); err != nil {
		w.metrics.job(outRetry)
		return err
	}
	until := time.Now().Add(client.ReviewWait())
	ch := store.Change{DocumentID: doc.ID, From: doc.State, To: document.StateProcessedRejected, Reason: &reason, Actor: actor,
		Detail: fmt.Sprintf("%s; held for review until %s (the client's review: hold)", detail, until.UTC().Format(time.RFC3339))}
	if _, err := w.st.HoldForReview(ctx, ch, until); err != nil {
		return w.transitionFailed(log, err)
	}
	w.metrics.job(outHeld)
	log.Info("unrouted document held for review", zap.String("detail", ch.Detail))
	return nil
}
