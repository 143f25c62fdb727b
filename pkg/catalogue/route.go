package catalogue

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/template"
)

// Competing returns the versions that compete on their keywords for a
// document of clientID that names no template (the routing chain, issue
// 29): every template the client is served now, its own and the enabled
// global ones, its own winning over a global one of the same name. Empty
// for a catalogue opened with NamesOnly (nothing compiled).
func (t *Catalogue) Competing(clientID string) []*Version {
	if t.namesOnly {
		return nil
	}
	s := t.snap.Load()
	own := s.client[clientID]
	out := make([]*Version, 0, len(own)+len(s.global))
	for _, v := range own {
		out = append(out, v)
	}
	for name, v := range s.global {
		if _, shadowed := own[name]; !shadowed {
			out = append(out, v)
		}
	}
	return out
}

// Compete runs the keyword competition among the versions served to
// clientID (template.Compete) and returns it with the chosen version (nil
// when there is no choice).
func (t *Catalogue) Compete(ctx context.Context, clientID, text string, budget time.Duration) (template.Competition, *Version, error) {
	vs := t.Competing(clientID)
	byTemplate := make(map[*template.Template]*Version, len(vs))
	ts := make([]*template.Template, 0, len(vs))
	for _, v := range vs {
		byTemplate[v.Template] = v
		ts = append(ts, v.Template)
	}
	c, err := template.Compete(ctx, text, ts, budget)
	if err != nil || c.Chosen == nil {
		return c, nil, err
	}
	return c, byTemplate[c.Chosen], nil
}
