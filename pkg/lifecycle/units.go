package lifecycle

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/units"
)

// ApplyUnits expresses o's lines in the supplier's units (issue 28): the
// client's unit table for the units o prints (one statement; none when no
// line prints a unit), then the built-in spellings (pkg/units). Every path
// that delivers an order takes this step: the processor before it renders
// the openTRANS, an approval in review before it renders the corrected
// order. The units neither knows are returned and o is left unchanged: the
// caller defers (mapping_not_resolved) rather than guess. The error is the
// store's or a conversion that would change a line's amount.
func ApplyUnits(ctx context.Context, st *store.Store, clientID string, o *order.Order) (units.Unresolved, error) {
	keys := units.Keys(o)
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := st.Units(ctx, clientID, keys, false)
	if err != nil {
		return nil, fmt.Errorf("unit table of %s: %w", clientID, err)
	}
	rules := make([]units.Rule, len(rows))
	for i, r := range rows {
		rules[i] = units.Rule{Unit: r.Unit, Article: r.Article, Code: r.Code, Factor: r.Factor}
	}
	return units.Apply(o, rules)
}

// units expresses an approved order's lines in the supplier's units, as the
// processor does before it renders a success; an unknown unit refuses the
// approval with the processor's reason, so the operator adds it first.
func (r Review) units(ctx context.Context, d document.Document, o *order.Order) error {
	missing, err := ApplyUnits(ctx, r.Store, d.ClientID, o)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return document.CodedErrorf(document.EINVALID, "mapping_not_resolved",
			"the corrected order needs a unit mapping: %s; add it and approve again", missing.Detail())
	}
	return nil
}
