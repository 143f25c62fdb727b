package processor

import (
	"context"
	"errors"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/units"
)

// units expresses a successful order's lines in the supplier's units
// (issue 28) before it is rendered: the client's unit table, then the
// built-in spellings, whichever reader made the order (template, generic
// reader, an attached Order-X or UBL). A unit neither knows turns the success
// into a deferral with mapping_not_resolved, exactly as a missing mapping
// does (handle's deferred: retried on the schedule, then dlq), so that ops
// add it to the table instead of the order going out in a guessed unit.
func (w *worker) units(ctx context.Context, doc document.Document, res *result) (deferred bool, err error) {
	missing, err := lifecycle.ApplyUnits(ctx, w.st, doc.ClientID, res.order)
	if errors.Is(err, units.ErrConversion) {
		return false, &failure{"units", err}
	}
	if err != nil {
		return false, err
	}
	if len(missing) == 0 {
		return false, nil
	}
	res.outcome = &template.Outcome{Status: template.OutcomeDeferred, Reason: document.ReasonMappingNotResolved,
		Detail: withSource(res.source, missing.Detail())}
	return true, nil
}
