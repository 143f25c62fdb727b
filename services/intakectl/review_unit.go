package intakectl

import (
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
)

// reviewUnit adds a row to a document's client's unit table, as the
// console's review page does for an unknown unit (lifecycle.Review.AddUnit):
// the documents deferred for that unit are processed again at once.
func reviewUnit(ctx context.Context, args []string, env Env) int {
	fs := newFlags("review unit", env)
	unit := fs.String("unit", "", "the unit as printed on the order (e.g. Bund)")
	code := fs.String("code", "", "your unit: a UN/ECE Rec 20 code of the BMEcat 2005 list (C62, KGM, CS, BE, …)")
	factor := fs.String("factor", "1", "your units per printed unit (a case of 12: 12)")
	article := fs.String("article", "", "only for this article number (default: every article)")
	logID, who, ok := learnFlags(fs, args, env)
	if !ok {
		return 2
	}
	return withLearn(ctx, env, logID, func(ctx context.Context, r lifecycle.Review, d document.Document) int {
		a, err := r.AddUnit(ctx, d, *unit, *article, *code, *factor, who)
		if err != nil {
			return fail(env, "%s: %v", logID, err)
		}
		was := ""
		if a.Previous != nil {
			was = fmt.Sprintf(" (was %s × %s)", a.Previous.Factor, a.Previous.Code)
		}
		fmt.Fprintf(env.Stdout, "unit %q%s → %s × %s added for client %s%s\n", a.Rule.Unit, forArticle(a.Rule.Article),
			a.Rule.Factor, a.Rule.Code, d.ClientID, was)
		for _, x := range a.Retried {
			fmt.Fprintf(env.Stdout, "%s: waited for it; processed again now\n", x.LogID)
		}
		return 0
	})
}
