package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// DocumentFlag is one flag of a document's attempt (migration 00023): a
// price outside the client's price list or a delivery date that cannot be
// met, with the expected and the printed value (pkg/orderflags.Flag).
type DocumentFlag struct {
	Seq      int
	Kind     string
	Line     int // 1-based order line, 0 for the header
	Position string
	Article  string
	Expected string
	Printed  string
	Message  string
}

// PutDocumentFlags records the flags of a document's attempt, replacing
// what an earlier run of the same attempt recorded, in one statement. It
// runs before the attempt's outcome is committed, so a flagged document
// never shows its outcome without its flags.
func (s *Store) PutDocumentFlags(ctx context.Context, documentID string, attempt int, flags []DocumentFlag) error {
	n := len(flags)
	seq, line := make([]int32, n), make([]*int32, n)
	kind, pos, art, exp, prn, msg := make([]string, n), make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n)
	for i, f := range flags {
		seq[i], kind[i], pos[i], art[i], exp[i], prn[i], msg[i] = int32(i+1), f.Kind, f.Position, f.Article, f.Expected, f.Printed, f.Message
		if f.Line > 0 {
			l := int32(f.Line)
			line[i] = &l
		}
	}
	_, err := s.db.Exec(ctx, `WITH gone AS (DELETE FROM document_flags WHERE document_id = $1 AND attempt = $2 AND seq > $3)
		INSERT INTO document_flags (document_id, attempt, seq, kind, line, position, article, expected, printed, message)
		SELECT $1, $2, * FROM unnest($4::int[], $5::text[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
		ON CONFLICT (document_id, attempt, seq) DO UPDATE SET kind = EXCLUDED.kind, line = EXCLUDED.line,
			position = EXCLUDED.position, article = EXCLUDED.article, expected = EXCLUDED.expected,
			printed = EXCLUDED.printed, message = EXCLUDED.message, created_at = now()`,
		documentID, attempt, n, seq, kind, line, pos, art, exp, prn, msg)
	return translate(err, "record document flags")
}

// DocumentFlags returns the flags of a document's current attempt, in
// their order (none: nil).
func (s *Store) DocumentFlags(ctx context.Context, documentID string) ([]DocumentFlag, error) {
	rows, err := s.db.Query(ctx, `SELECT f.seq, f.kind, coalesce(f.line, 0), f.position, f.article, f.expected, f.printed,
			f.message
		FROM document_flags f JOIN documents d ON d.id = f.document_id AND d.attempt = f.attempt
		WHERE f.document_id = $1 ORDER BY f.seq`, documentID)
	if err != nil {
		return nil, translate(err, "document flags")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DocumentFlag, error) {
		var f DocumentFlag
		return f, r.Scan(&f.Seq, &f.Kind, &f.Line, &f.Position, &f.Article, &f.Expected, &f.Printed, &f.Message)
	})
	return out, translate(err, "document flags")
}
