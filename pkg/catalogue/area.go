package catalogue

import (
	"context"

	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
)

// AreaFunc crops pdf through eng for template fields with an `area`
// (invoice2data's pdftotext -f -l -r -x -y -W -H), so a crop reads the
// document with the same engine as the whole text.
func AreaFunc(eng pdftext.Engine, pdf []byte) template.AreaFunc {
	return func(ctx context.Context, a template.Area) (string, error) {
		t, err := eng.ExtractRegion(ctx, pdf, pdftext.Region(a))
		if err != nil {
			return "", err
		}
		return t.String(), nil
	}
}
