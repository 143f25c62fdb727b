package template

import (
	"errors"
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
		errs = append(errs, s.add(t, false)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s.sort()
	return s, nil
}
