package generic

import (
	"context"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/template"
)

func read(ctx context.Context, text string, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Result{Outcome: &template.Outcome{Status: template.OutcomeRejected, Reason: document.ReasonUnknownFormat, Detail: "not implemented yet"}}, nil
}
