package template

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultBudget is the time one document's template run may take (template
// choice, options, fields, lines, tables, rules) when RunOptions.Budget or
// ExtractOptions.Budget is zero; INTAKE_TEMPLATE_BUDGET sets it in the
// services. Templates are client data: without one bound per document, a
// lines block of N lines each hitting MatchTimeout cost N × MatchTimeout,
// on every attempt and every sample run.
const DefaultBudget = 5 * time.Second

// ErrBudget is matched (errors.Is) by every *BudgetError.
var ErrBudget = errors.New("template time limit exceeded")

// Usage counts one run's regex work.
type Usage struct {
	Matches      int // searches run on either engine
	Backtracking int // matches tried on the backtracking engine (regexp2)
	// Stopped counts backtracking matches cut short because the budget
	// ran out during them.
	Stopped int
}

// BudgetError is the error of a run stopped because its time budget ran
// out: the template, not the document, needs fixing (or the budget
// raising). It names the template and where the time ran out.
type BudgetError struct {
	Template string
	Budget   time.Duration
	Where    string // "keywords", "options.replace", "field total", "rules", …
	Usage    Usage
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("template %s: time limit exceeded: the budget of %v per document (INTAKE_TEMPLATE_BUDGET) ran out in %s after %d regex searches (%d backtracking matches)",
		e.Template, e.Budget, e.Where, e.Usage.Matches, e.Usage.Backtracking)
}

// Unwrap makes errors.Is(err, ErrBudget) hold.
func (e *BudgetError) Unwrap() error { return ErrBudget }

// meter is one run's budget: every regex search asks it first, and loops
// over lines, rows and fields stop once it is spent. A nil *meter is no
// budget (MatchTimeout alone bounds a backtracking match). A meter belongs
// to one goroutine (one document's run), so it needs no lock.
type meter struct {
	ctx      context.Context
	template string
	budget   time.Duration
	deadline time.Time
	where    string
	usage    Usage
	err      error // sticky: the first stop (a *BudgetError or ctx's error)
}

// budgetKey is the context key of WithBudget.
type budgetKey struct{}

// WithBudget returns ctx carrying d as the budget of every run under it
// that sets none of its own (RunOptions.Budget, ExtractOptions.Budget
// zero): a service sets its configured budget once on the context its
// jobs or requests derive from, and runs deep in other packages (sample
// checks) honour it. d zero leaves DefaultBudget.
func WithBudget(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, budgetKey{}, d)
}

// newMeter starts a budget of d (0: ctx's from WithBudget, else
// DefaultBudget; negative: none but ctx) for a run of template name.
func newMeter(ctx context.Context, name string, d time.Duration) *meter {
	if d == 0 {
		d, _ = ctx.Value(budgetKey{}).(time.Duration)
	}
	if d == 0 {
		d = DefaultBudget
	}
	m := &meter{ctx: ctx, template: name, budget: d, where: "template choice"}
	if d > 0 {
		m.deadline = time.Now().Add(d)
	}
	return m
}

// at names the step the following searches belong to (for the error).
func (m *meter) at(where string) {
	if m != nil {
		m.where = where
	}
}

// named sets the template once it is chosen.
func (m *meter) named(name string) {
	if m != nil {
		m.template = name
	}
}

// check returns the stop error once the context is done or the time is
// spent, nil before.
func (m *meter) check() error {
	if m == nil {
		return nil
	}
	if m.err != nil {
		return m.err
	}
	if err := m.ctx.Err(); err != nil {
		m.err = err
		return err
	}
	if !m.deadline.IsZero() && !time.Now().Before(m.deadline) {
		m.spend()
	}
	return m.err
}

// spend marks the budget spent.
func (m *meter) spend() {
	if m.err == nil {
		m.err = &BudgetError{Template: m.template, Budget: m.budget, Where: m.where}
	}
}

// stopped reports whether the run must stop (no new work); it reads the
// clock.
func (m *meter) stopped() bool { return m.check() != nil }

// stop is the stop error already found (it does not read the clock): after
// a search failed, it tells the budget's end from a match timeout.
func (m *meter) stop() error {
	if m == nil {
		return nil
	}
	return m.err
}

// search is called before each search; it returns the stop error when
// there is no time left for it.
func (m *meter) search() error {
	if err := m.check(); err != nil {
		return err
	}
	if m != nil {
		m.usage.Matches++
	}
	return nil
}

// backtrack counts one match run on the backtracking engine (a search
// runs one per match it finds, and one more that finds none).
func (m *meter) backtrack() {
	if m != nil {
		m.usage.Backtracking++
	}
}

// matchTimeout is the limit of the next backtracking match: limit, or
// the time left when that is less. capped tells a timeout of this match
// apart from the budget's end.
func (m *meter) matchTimeout(limit time.Duration) (d time.Duration, capped bool) {
	if m == nil || m.deadline.IsZero() {
		return limit, false
	}
	left := time.Until(m.deadline)
	if left < limit {
		// regexp2 treats a timeout <= 0 as already past; at least a
		// millisecond keeps its clock arithmetic sane.
		return max(left, time.Millisecond), true
	}
	return limit, false
}

// timedOut records that a backtracking match hit the timeout given by
// matchTimeout: when that was the budget's remainder, the run is over.
func (m *meter) timedOut(capped bool) error {
	if m == nil || !capped {
		return nil
	}
	m.usage.Stopped++
	m.spend()
	return m.err
}

// result is the stop error with the usage filled in.
func (m *meter) result() error {
	if m == nil {
		return nil
	}
	var be *BudgetError
	if errors.As(m.err, &be) {
		be.Template, be.Usage = m.template, m.usage
	}
	return m.err
}

// areaContext bounds an area crop (a text engine call) by the budget.
func (m *meter) areaContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if m == nil || m.deadline.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, m.deadline)
}
