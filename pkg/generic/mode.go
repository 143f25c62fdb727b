package generic

import (
	"context"
	"errors"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/template"
)

// ReadAs reads a document's layout text with the generic reader as the
// processor does (template generic, a client's unknown_party: generic, a
// template's fallback: generic) and as `intakectl extract --generic` shows
// it. The reader has no result mode: with no_items a proven reading loses
// its items, as a template neither delivers nor requires them then, and a
// document the reader cannot prove without its items stays rejected. Its
// only errors are ctx's.
func ReadAs(ctx context.Context, text string, mode document.ResultMode, opts Options) (*Result, error) {
	r, err := Read(ctx, text, opts)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Outcome == nil {
		return nil, errors.New("generic reader returned no outcome")
	}
	if r.Outcome.Status == template.OutcomeSuccess && mode == document.ResultModeNoItems && r.Order != nil {
		r.Order.Items, r.Order.NoItems = nil, true
	}
	return r, nil
}
