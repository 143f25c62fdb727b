package template_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/template"
)

// hostileTemplate is issue 25's finding 1: a catastrophic pattern ((a+)+b,
// forced onto the backtracking engine by the lookahead) as the line regex
// of a lines block. On a line of 40 a's one match never ends by itself.
const hostileTemplate = `
issuer: Hostile
keywords: [HOSTILE ORDER]
fields:
  order_id: {parser: regex, regex: 'Order no\.?\s+(\S+)'}
  lines:
    parser: lines
    start: Items
    end: End of items
    line: '(?=(a+)+b)(?P<description>a+)'
docintake:
  name: hostile
`

// hostileText is a 30-line sample: every line sends the line regex into
// exponential backtracking.
var hostileText = "HOSTILE ORDER\nOrder no. 4711\nItems\n" +
	strings.Repeat(strings.Repeat("a", 40)+"!\n", 30) + "End of items\n"

// The whole run has one budget. Before, each of the 30 lines ran until its
// own MatchTimeout (30 × 2 s per attempt); now the first backtracking
// match is cut to what is left of the budget, the run stops there and says
// so, naming the template and the step.
func TestHostileLinesBlockStopsAtBudget(t *testing.T) {
	t.Parallel()
	set := loadOne(t, hostileTemplate)
	run, err := set.Run(t.Context(), hostileText, template.RunOptions{Template: "hostile", Budget: time.Second})
	require.ErrorIs(t, err, template.ErrBudget)
	var be *template.BudgetError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "hostile", be.Template)
	require.Equal(t, time.Second, be.Budget)
	require.Contains(t, err.Error(), "template hostile: time limit exceeded")
	require.Contains(t, err.Error(), "budget of 1s per document")
	// MatchTimeout (2 s) is more than the whole budget: the first line's
	// match is the only one, and the budget stopped it.
	require.LessOrEqual(t, be.Usage.Backtracking, 1, "30 hostile lines, at most one backtracking match")
	require.Equal(t, be.Usage.Backtracking, be.Usage.Stopped)
	if be.Usage.Backtracking == 1 {
		require.Equal(t, "field lines", be.Where)
	}
	// The partial run comes with the error; the document's text is not
	// copied into the error (regexp2's timeout message quotes its input).
	require.NotNil(t, run)
	require.NotNil(t, run.Result)
	require.Equal(t, be.Usage, run.Result.Usage)
	require.NotContains(t, err.Error(), strings.Repeat("a", 40))
}

// With a MatchTimeout below the budget, each line's match times out on its
// own (an error on the field) and the run goes on, but only until the
// budget is spent: every match waits at least MatchTimeout before it is
// abandoned, so at most budget/MatchTimeout+1 of the 30 lines run. Not
// parallel: it shortens the package's MatchTimeout while compiling.
func TestBudgetBoundsMatchTimeouts(t *testing.T) {
	old := template.MatchTimeout
	template.MatchTimeout = 50 * time.Millisecond
	set := loadOne(t, hostileTemplate)
	template.MatchTimeout = old
	_, err := set.Run(t.Context(), hostileText, template.RunOptions{Template: "hostile", Budget: 500 * time.Millisecond})
	var be *template.BudgetError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "field lines", be.Where)
	require.LessOrEqual(t, be.Usage.Backtracking, 11)
	require.Less(t, be.Usage.Backtracking, 30)
	require.LessOrEqual(t, be.Usage.Stopped, 1)
}

// A budget set on the context (a service's configured one) applies to runs
// that set none; a run's own wins.
func TestBudgetFromContext(t *testing.T) {
	t.Parallel()
	set := loadOne(t, hostileTemplate)
	ctx := template.WithBudget(t.Context(), 300*time.Millisecond)
	_, err := set.Run(ctx, hostileText, template.RunOptions{Template: "hostile"})
	var be *template.BudgetError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 300*time.Millisecond, be.Budget)
	_, err = set.Run(ctx, hostileText, template.RunOptions{Template: "hostile", Budget: 200 * time.Millisecond})
	require.ErrorAs(t, err, &be)
	require.Equal(t, 200*time.Millisecond, be.Budget)
}

// Template choice is inside the budget: a hostile keyword stops the run
// and names its template.
func TestBudgetCoversTemplateChoice(t *testing.T) {
	t.Parallel()
	tpl := strings.Replace(hostileTemplate, "keywords: [HOSTILE ORDER]", `keywords: ['(?=(a+)+b)a']`, 1)
	set := loadOne(t, tpl)
	_, err := set.Run(t.Context(), hostileText, template.RunOptions{Budget: 200 * time.Millisecond})
	var be *template.BudgetError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "hostile", be.Template)
	require.LessOrEqual(t, be.Usage.Backtracking, 1)
}

// A request that goes away cancels its run: a context cancelled during the
// run (here by the area crop, the first field) stops it before the hostile
// lines (the top-level lines plugin, read after every field, where the old
// code never looked at ctx). The error is ctx's, so callers tell it from
// the template's failures; no backtracking match ran.
func TestCancelStopsRunInProgress(t *testing.T) {
	t.Parallel()
	tpl := `
issuer: Hostile
keywords: [HOSTILE ORDER]
fields:
  order_id: {parser: regex, regex: 'Order no\.?\s+(\S+)', area: {f: 1, l: 1, x: 0, y: 0, r: 72, W: 600, H: 100}}
lines:
  start: Items
  end: End of items
  line: '(?=(a+)+b)(?P<description>a+)'
docintake:
  name: hostile
`
	set := loadOne(t, tpl)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	crops := 0
	area := func(ctx context.Context, _ template.Area) (string, error) {
		crops++
		cancel() // the client went away while its document was read
		return "Order no. 4711", ctx.Err()
	}
	run, err := set.Run(ctx, hostileText, template.RunOptions{Template: "hostile", Area: area, Budget: -1})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, errors.Is(err, template.ErrBudget))
	require.Equal(t, 1, crops)
	require.NotNil(t, run.Result)
	require.Zero(t, run.Result.Usage.Backtracking, "nothing runs after the cancellation")

	// A context already done runs nothing at all.
	run, err = set.Run(ctx, hostileText, template.RunOptions{Template: "hostile"})
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, run.Result.Usage.Matches)
}

// Backtracking patterns are shared by every document's run while each run
// limits its matches to its own budget: documents with different budgets
// at once get their own limits (the race detector checks the sharing).
func TestBudgetsOfConcurrentRuns(t *testing.T) {
	t.Parallel()
	tpl := strings.Replace(hostileTemplate, "keywords: [HOSTILE ORDER]", `keywords: ['HOSTILE(?= ORDER)']`, 1)
	set := loadOne(t, tpl)
	benign := strings.ReplaceAll(hostileText, strings.Repeat("a", 40)+"!", "aaab")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	rows := make([]int, 8)
	for i := range errs {
		wg.Go(func() {
			text, budget := benign, time.Duration(0)
			if i%2 == 1 {
				text, budget = hostileText, 100*time.Millisecond
			}
			run, err := set.Run(t.Context(), text, template.RunOptions{Template: "hostile", Budget: budget})
			errs[i] = err
			if err == nil {
				v, _ := run.Result.Fields.Get("lines")
				rows[i] = len(v.([]any))
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i%2 == 1 {
			require.ErrorIs(t, err, template.ErrBudget, "run %d", i)
			continue
		}
		// A benign document meets no limit: 30 rows, keyword matched.
		require.NoError(t, err, "run %d", i)
		require.Equal(t, 30, rows[i], "run %d", i)
	}
}
