package embedded

import (
	"context"

	"github.com/docintake/docintake/pkg/template"
)

// Attempt is what Run found in a PDF's attachments.
type Attempt struct {
	// Run is the template's run on the attached business document; nil
	// means: read the PDF's text (no document, the template ignores
	// attachments, or the attachments were not readable).
	Run *template.Run
	// Found lists the attachments and the recognised document (nil when
	// they were not read).
	Found *Found
	// Unreadable is why the attachments could not be read (too large,
	// hostile, a PDF pdfdetach cannot parse, no pdfdetach): the text path
	// decides then, so it is for logs and debug views, not an error.
	Unreadable error
}

// Run is the one way every reader of a PDF — the processor, `intakectl
// extract`, template samples — lets a template read the business document
// the PDF carries before its printed text: an attached Order-X or UBL order
// wins, an attached invoice is rejected by order templates, and a template
// with `embedded: ignore` never looks. Only the end of ctx and the template
// engine's errors are returned as errors.
func Run(ctx context.Context, set *template.Set, pdf []byte, lim Limits, opts template.RunOptions) (Attempt, error) {
	if !set.ReadsEmbedded(opts) {
		return Attempt{}, nil
	}
	found, err := Find(ctx, pdf, lim)
	if err != nil {
		if ctx.Err() != nil {
			return Attempt{}, ctx.Err()
		}
		return Attempt{Unreadable: err}, nil
	}
	a := Attempt{Found: found}
	if found.Document == nil {
		return a, nil
	}
	run, err := set.RunStructured(ctx, found.Document.Structured(), opts)
	if err != nil {
		return a, err
	}
	a.Run = run
	return a, nil
}
