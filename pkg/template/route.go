package template

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Competition is the keyword step of the routing chain (issue 29): which of
// a client's templates claim a document nobody addressed.
type Competition struct {
	// Chosen is the winner: the only template whose keywords all match, or
	// of several the one with the highest priority. nil when none matches
	// or the highest priority is shared (a tie is no choice: guessing
	// between two buyers would send one buyer's order as another's).
	Chosen *Template
	// Matched are the templates whose keywords all match and whose
	// exclude_keywords do not, highest priority first (then by name).
	Matched []*Template
	// Tried counts the templates that competed.
	Tried int
}

// Compete tests every template's keywords on text (each on its own
// prepared text, as invoice2data does; templates that prepare alike share
// the work) and decides as Competition says. Unlike Set.Match it does not
// stop at the first match: a second template claiming the document must be
// seen to tell a tie. Templates that read structured attachments only
// (embedded: require), and any without keywords, do not compete. budget bounds the whole competition
// as RunOptions.Budget bounds a run (0: the context's or DefaultBudget); its
// end is a *BudgetError.
func Compete(ctx context.Context, text string, ts []*Template, budget time.Duration) (Competition, error) {
	ts = slices.Clone(ts)
	slices.SortStableFunc(ts, func(a, b *Template) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Name, b.Name))
	})
	m := newMeter(ctx, "", budget)
	p := preparer{m: m, text: text}
	var c Competition
	for _, t := range ts {
		if t.DocIntake.Embedded == EmbeddedRequire || len(t.Keywords) == 0 {
			continue // no text to match, or nothing that would tell one buyer from another
		}
		if m.stopped() {
			break
		}
		c.Tried++
		m.named(t.Name)
		m.at("keywords (routing)")
		id, ok := p.prepare(&t.Options, nil)
		if ok && t.chosen(&p, id) {
			c.Matched = append(c.Matched, t)
		}
	}
	if err := m.result(); err != nil {
		return Competition{}, err
	}
	switch {
	case len(c.Matched) == 1:
		c.Chosen = c.Matched[0]
	case len(c.Matched) > 1 && c.Matched[0].Priority > c.Matched[1].Priority:
		c.Chosen = c.Matched[0]
	}
	return c, nil
}

// Explain says for a document's history how the competition ended:
// "template X (priority 5) over Y (priority 1)", "X and Y match with the
// same priority 5: no choice", "none of the 4 templates' keywords all match".
func (c Competition) Explain() string {
	switch {
	case len(c.Matched) == 0:
		return fmt.Sprintf("none of the %d templates' keywords all match", c.Tried)
	case c.Chosen != nil && len(c.Matched) == 1:
		return fmt.Sprintf("template %s (priority %d), the only one of %d templates whose keywords all match",
			c.Chosen.Name, c.Chosen.Priority, c.Tried)
	case c.Chosen != nil:
		return fmt.Sprintf("template %s (priority %d) over %s", c.Chosen.Name, c.Chosen.Priority, listed(c.Matched[1:]))
	}
	top := c.Matched[0].Priority
	var tied []*Template
	for _, t := range c.Matched {
		if t.Priority == top {
			tied = append(tied, t)
		}
	}
	names := make([]string, len(tied))
	for i, t := range tied {
		names[i] = t.Name
	}
	return fmt.Sprintf("templates %s match with the same priority %d: no choice", strings.Join(names, ", "), top)
}

// listed is "Y (priority 1), Z (priority 0)".
func listed(ts []*Template) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s (priority %d)", t.Name, t.Priority)
	}
	return strings.Join(parts, ", ")
}
