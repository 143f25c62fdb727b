package template

import (
	"errors"
	"fmt"
	"sort"
)

// SamplesSuffix ends the name of a template's samples folder (NAME.samples
// beside NAME.yml); Load skips such folders.
const SamplesSuffix = ".samples"

// NewSet builds a Set from templates parsed elsewhere (the catalogue stored
// in PostgreSQL). Like Load it refuses two templates with one name or party
// id; templates keep their Problems (callers decide whether those are
// acceptable).
func NewSet(templates ...*Template) (*Set, error) {
	s := &Set{byName: map[string]*Template{}, byParty: map[string]*Template{}}
	var errs []error
	for _, t := range templates {
		if prev, ok := s.byName[t.Name]; ok {
			errs = append(errs, fmt.Errorf("template: duplicate name %q in %s and %s", t.Name, prev.File, t.File))
			continue
		}
		s.byName[t.Name] = t
		for _, id := range t.DocIntake.PartyIDs {
			if prev, ok := s.byParty[id]; ok {
				errs = append(errs, fmt.Errorf("template: duplicate party_id %q in %s and %s", id, prev.File, t.File))
				continue
			}
			s.byParty[id] = t
		}
		s.templates = append(s.templates, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(s.templates, func(i, j int) bool { return s.templates[i].Priority > s.templates[j].Priority })
	return s, nil
}
