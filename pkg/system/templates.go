package system

import (
	"fmt"

	"github.com/docintake/docintake/pkg/template"
)

// Templates is the template catalogue of INTAKE_TEMPLATES_DIR.
type Templates struct{ Set *template.Set }

// LoadTemplates loads and validates every template under dir. A bad
// template, or two templates claiming one name or party_id, is an error that
// names the files.
func LoadTemplates(dir string) (Templates, error) {
	set, err := template.Load(dir)
	if err != nil {
		return Templates{}, fmt.Errorf("templates %s: %w", dir, err)
	}
	return Templates{Set: set}, nil
}

// Resolve implements ingest.Templates: an explicit name wins, else the
// template that claims partyID.
func (t Templates) Resolve(name, partyID string) (string, bool) {
	if name != "" {
		tm, ok := t.Set.ByName(name)
		if !ok {
			return "", false
		}
		return tm.Name, true
	}
	tm, ok := t.Set.ByPartyID(partyID)
	if !ok {
		return "", false
	}
	return tm.Name, true
}
