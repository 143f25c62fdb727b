package ingest

import (
	"context"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
)

// documentFlag is one flag of the document details' flags extension
// (docs/orders.md): what the order's price and date checks found, the
// result JSON's flags as well.
type documentFlag struct {
	Kind     string `json:"kind"`
	Line     int    `json:"line"`
	Position string `json:"position,omitempty"`
	Article  string `json:"article,omitempty"`
	Expected string `json:"expected"`
	Printed  string `json:"printed"`
	Message  string `json:"message"`
}

// flagStore is the part of the store that keeps documents' flags
// (*store.Store); a Store without it shows none.
type flagStore interface {
	DocumentFlags(ctx context.Context, documentID string) ([]store.DocumentFlag, error)
}

// documentFlags returns the flags of d's current attempt; a document
// without an outcome has none, and is not looked up (clients poll those).
func (s *Server) documentFlags(ctx context.Context, d document.Document) ([]documentFlag, error) {
	fs, ok := s.store.(flagStore)
	if _, decided := document.StatusFor(d.State); !decided || !ok {
		return nil, nil
	}
	rows, err := fs.DocumentFlags(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	var out []documentFlag
	for _, f := range rows {
		out = append(out, documentFlag{Kind: f.Kind, Line: f.Line, Position: f.Position, Article: f.Article,
			Expected: f.Expected, Printed: f.Printed, Message: f.Message})
	}
	return out, nil
}
