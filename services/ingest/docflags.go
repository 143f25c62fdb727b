package ingest

import (
	"context"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
)

// flagStore is the part of the store that keeps documents' flags
// (*store.Store); a Store without it shows none.
type flagStore interface {
	DocumentFlags(ctx context.Context, documentID string) ([]store.DocumentFlag, error)
}

// documentFlags returns the flags of d's current attempt (the document
// details' extension, docs/orders.md, shaped as the result JSON's flags);
// a document without an outcome has none and is not looked up: clients
// poll those.
func (s *Server) documentFlags(ctx context.Context, d document.Document) ([]resultjson.Flag, error) {
	fs, ok := s.store.(flagStore)
	if _, decided := document.StatusFor(d.State); !decided || !ok {
		return nil, nil
	}
	rows, err := fs.DocumentFlags(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	var out []resultjson.Flag
	for _, f := range rows {
		out = append(out, resultjson.Flag{Kind: f.Kind, Line: f.Line, Position: f.Position, Article: f.Article,
			Expected: f.Expected, Printed: f.Printed, Message: f.Message})
	}
	return out, nil
}
