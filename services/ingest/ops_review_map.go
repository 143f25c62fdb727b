package ingest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// Mapping an unknown key on the review page (issue 27, the
// MAPPING_NOT_RESOLVED path): the article numbers (or other mapped values)
// and units an order lacks are shown at the item rows that print them,
// with inputs for what they are; "add" writes the client's mapping entry
// (lifecycle.Review.AddMapping) or unit row (AddUnit), which processes
// the documents deferred for it again at once.

// missingView is an unknown key with the inputs that map it; its inputs
// are named map-N-… and its button posts map=N.
type missingView struct {
	lifecycle.Missing
	N      int
	Action string   // the map route of the document
	Rows   []string // the item lines that print it, in words (a page without the item table)
}

// FieldLabel names the field the key was printed in.
func (m missingView) FieldLabel() string {
	for _, c := range itemColumns {
		if c.key == m.Field {
			return c.label
		}
	}
	return strings.ReplaceAll(m.Field, "_", " ")
}

// Where names the lines that print the key.
func (m missingView) Where() string {
	if len(m.Lines) == 0 {
		return ""
	}
	parts := make([]string, len(m.Lines))
	for i, l := range m.Lines {
		parts[i] = fmt.Sprint(l)
	}
	if len(parts) == 1 {
		return "line " + parts[0]
	}
	return "lines " + strings.Join(parts, ", ")
}

// missingViews numbers the missing keys for the form; rows describes the
// item lines of o (nil: the page shows its own item table).
func missingViews(logID string, missing []lifecycle.Missing, o *order.Order) []missingView {
	out := make([]missingView, len(missing))
	for i, m := range missing {
		out[i] = missingView{Missing: m, N: i, Action: "/ops/review/" + url.PathEscape(logID) + "/map"}
		if o == nil {
			continue
		}
		for _, l := range m.Lines {
			if l >= 1 && l <= len(o.Items) {
				it := o.Items[l-1]
				out[i].Rows = append(out[i].Rows, strings.Join(strings.Fields(fmt.Sprintf("line %d: %s %s %s %s %s %s", l,
					it.Position, it.SupplierArticleID, it.BuyerArticleID, it.Description, it.Quantity, it.Unit)), " "))
			}
		}
	}
	return out
}

// heldMissing is what the order shown on a held document's page lacks,
// placed at the item rows that print it (or above the items for a header
// value). A failure only leaves the page without it (logged).
func (r *reviewer) heldMissing(ctx context.Context, d document.Document, v *reviewView, tpl *template.Template, o *order.Order) {
	missing, err := r.review.MissingFor(ctx, d.ClientID, tpl, *o)
	if err != nil {
		r.ops.logger.Warn("review: missing mappings", zap.String("log_id", d.LogID), zap.Error(err))
		return
	}
	for _, m := range missingViews(d.LogID, missing, nil) {
		if len(m.Lines) == 0 || m.Lines[0] > len(v.Items) {
			v.Missing = append(v.Missing, m)
			continue
		}
		row := &v.Items[m.Lines[0]-1]
		row.Unknown = append(row.Unknown, m)
		for _, l := range m.Lines {
			if l > len(v.Items) {
				continue
			}
			if l != m.Lines[0] {
				v.Items[l-1].Also = append(v.Items[l-1].Also, fmt.Sprintf("unknown %s %q: mapped at line %d", m.Kind, m.Key, m.Lines[0]))
			}
			warnCell(&v.Items[l-1], m)
		}
	}
}

// warnCell marks the cell of row that prints m's key.
func warnCell(row *itemRow, m missingView) {
	for i := range row.Cells {
		if c := &row.Cells[i]; c.Name == fmt.Sprintf("i%d.%s", row.Index, m.Field) && c.Warning == "" {
			c.Warning = fmt.Sprintf("unknown %s: not in the client's table yet", m.Kind)
		}
	}
}

// waitingMissing is what a document deferred (or in dlq) for a missing
// mapping or unit waits for: from its stored reading with the item lines,
// else as its last deferral names it.
func (r *reviewer) waitingMissing(ctx context.Context, d document.Document) []missingView {
	if d.StatusReason != document.ReasonMappingNotResolved ||
		(d.State != document.StateDeferredForRetry && d.State != document.StateDLQ) {
		return nil
	}
	if rd, err := r.review.Reading(ctx, d); err == nil {
		var tpl *template.Template
		if v, err := r.review.Pinned(ctx, d.ID); err == nil && v != nil {
			tpl = v.Template
		}
		if missing, err := r.review.MissingFor(ctx, d.ClientID, tpl, rd.Canonical); err == nil {
			return missingViews(d.LogID, missing, &rd.Canonical)
		}
	}
	events, err := r.ops.store.Events(ctx, d.ID)
	if err != nil {
		return nil
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Reason == document.ReasonMappingNotResolved {
			return missingViews(d.LogID, lifecycle.MissingIn(events[i].Detail), nil)
		}
	}
	return nil
}

// handleMap adds the entry of the posted key (map=N): a mapping entry or
// a unit row of the document's client. A held document's page comes back
// with the person's corrections kept; a document in dlq waiting for a
// mapping is re-queued (as `intakectl dlq requeue`).
func (r *reviewer) handleMap(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.ops.fail(c, err)
	}
	ctx := c.Request().Context()
	f := c.Request().PostForm
	p := "map-" + f.Get("map") + "-"
	who := operatorOf(c).actor()
	var retried []document.Document
	if f.Get(p+"unit") != "" {
		var a lifecycle.UnitAdded
		a, err = r.review.AddUnit(ctx, d, f.Get(p+"key"), f.Get(p+"article"), f.Get(p+"code"), f.Get(p+"factor"), who)
		retried = a.Retried
	} else {
		var a lifecycle.MappingAdded
		a, err = r.review.AddMapping(ctx, d, store.Mapping{Kind: f.Get(p + "kind"), Key: f.Get(p + "key"), Value: f.Get(p + "value")}, who)
		retried = a.Retried
	}
	_, held, herr := r.ops.store.ReviewUntil(ctx, d.ID)
	if err == nil {
		err = herr
	}
	if document.ErrorKind(err) == document.EINVALID {
		return r.mapRefused(c, d, held, "Not added: "+errText(err))
	}
	if err == nil {
		err = r.requeueWaiting(ctx, d, who)
	}
	if err != nil {
		return r.ops.fail(c, err)
	}
	r.ops.logger.Info("ops action", zap.String("action", "mapped"), zap.String("log_id", d.LogID),
		zap.String("client_id", d.ClientID), zap.String("key", f.Get(p+"key")), zap.Int("retried", len(retried)), zap.String("operator", who))
	if held {
		return r.renderPage(c, d, pageState{form: f, status: http.StatusOK,
			done: fmt.Sprintf("Added for client %s: approve again (documents waiting for it processed again: %d).", d.ClientID, len(retried))})
	}
	return c.Redirect(http.StatusSeeOther, "/ops/review/"+url.PathEscape(d.LogID)+"?done=mapped")
}

// mapRefused shows the page again with why the entry was refused.
func (r *reviewer) mapRefused(c echo.Context, d document.Document, held bool, msg string) error {
	if held {
		return r.renderPage(c, d, pageState{form: c.Request().PostForm, message: msg, status: http.StatusUnprocessableEntity})
	}
	return r.renderFinished(c, d, http.StatusUnprocessableEntity, map[string]any{"Doc": d, "Message": msg})
}

// requeueWaiting re-queues d when it is in dlq for a missing mapping: its
// retries are used up, so the entry just added would otherwise never be
// tried on it.
func (r *reviewer) requeueWaiting(ctx context.Context, d document.Document, who string) error {
	cur, err := r.ops.store.Document(ctx, d.ID)
	if err != nil || cur.State != document.StateDLQ || cur.StatusReason != document.ReasonMappingNotResolved {
		return err
	}
	_, err = lifecycle.Requeue(ctx, r.ops.store, r.review.Prefix, cur, who)
	if document.ErrorKind(err) == document.ECONFLICT {
		return nil // moved on meanwhile
	}
	return err
}
