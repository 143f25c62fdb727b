package pogen

import (
	"testing"

	"github.com/docintake/docintake/pkg/opentrans"
)

// Every unit the generator prints is one of docintake's built-in spellings:
// since issue 28 an unknown unit defers the document (mapping_not_resolved)
// instead of being written as pieces, so a unit added to a vocabulary here
// without a spelling in pkg/opentrans would turn generated POs into
// deferrals in the processor.
func TestGeneratedUnitsAreKnown(t *testing.T) {
	t.Parallel()
	for _, v := range []*vocab{en, de, fr, nl, es, it} {
		for _, u := range v.units {
			if _, known := opentrans.UnitCode(u); !known {
				t.Errorf("%s: unit %q is not a built-in spelling (pkg/opentrans/unit.go)", v.lang, u)
			}
		}
	}
}
