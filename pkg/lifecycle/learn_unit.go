package lifecycle

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/units"
)

// UnitAdded is what AddUnit did.
type UnitAdded struct {
	Rule units.Rule
	// Previous is the row the new one replaced (same unit and article), nil
	// when there was none: a correction is recorded as such.
	Previous *store.UnitRow
	// Retried are the client's documents deferred for the unit as printed,
	// given a process job now.
	Retried []document.Document
}

// UnitWaitingFor is how a deferral for an unknown unit names it
// (units.Unresolved.Detail: `"Bund" (line 1, position 10)`): what finds
// the documents waiting for the unit once a person adds it.
func UnitWaitingFor(printed string) string { return fmt.Sprintf("%q (line ", printed) }

// AddUnit is AddMapping for the client's unit table (issue 28): a person
// says what an unknown unit printed on d is in the supplier's units (a
// code of the BMEcat 2005 list and a factor, for every article or for one)
// while reviewing d. In one transaction: the row (units.NewRule's checks,
// EINVALID when it fails them; it replaces the row of the same unit and
// article), an event on d's history naming who, the row and the one it
// replaced, and a process job now for every document of the client
// deferred for that unit as printed (store.RetryDeferredFor), each with an
// event naming who. A unit spelt otherwise ("BUND" for "Bund") waits for its
// retry as before.
func (r Review) AddUnit(ctx context.Context, d document.Document, unit, article, code, factor, who string) (UnitAdded, error) {
	rule, err := units.NewRule(unit, article, code, factor)
	if err != nil {
		return UnitAdded{}, document.CodedErrorf(document.EINVALID, "unit_invalid", "unit %q: %v", unit, err)
	}
	row := store.UnitRow{Unit: rule.Unit, UnitKey: units.Key(rule.Unit), Article: rule.Article,
		ArticleKey: units.ArticleKey(rule.Article), Code: rule.Code, Factor: rule.Factor}
	var out UnitAdded
	err = r.Store.WithTx(ctx, func(tx *store.Store) error {
		out = UnitAdded{Rule: rule}
		cur, err := tx.Document(ctx, d.ID)
		if err != nil {
			return err
		}
		rows, err := tx.Units(ctx, d.ClientID, []string{row.UnitKey}, false)
		if err != nil {
			return err
		}
		for i := range rows {
			if rows[i].ArticleKey == row.ArticleKey {
				out.Previous = &rows[i]
			}
		}
		if err := tx.PutUnits(ctx, d.ClientID, []store.UnitRow{row}, false); err != nil {
			return err
		}
		if err := tx.RecordEvent(ctx, cur.ID, cur.State, who, unitDetail(d.ClientID, out)); err != nil {
			return err
		}
		out.Retried, err = tx.RetryDeferredFor(ctx, d.ClientID, UnitWaitingFor(rule.Unit), who,
			func(d document.Document, seq int) store.OutboxRow { return ProcessJob(ctx, r.Prefix, d, seq) })
		return err
	})
	return out, err
}

// unitDetail is the event of an added unit row.
func unitDetail(clientID string, a UnitAdded) string {
	r := a.Rule
	s := fmt.Sprintf("unit %q%s → %s × %s added to the unit table of client %s", r.Unit, forArticle(r.Article), r.Factor, r.Code, clientID)
	if p := a.Previous; p != nil {
		s += fmt.Sprintf(" (was %s × %s)", p.Factor, p.Code)
	}
	return s
}

func forArticle(article string) string {
	if article == "" {
		return ""
	}
	return fmt.Sprintf(" (article %q)", article)
}
