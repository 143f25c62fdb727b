package store

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
)

// UnitRow is one row of a client's unit table (issue 28): one Unit of the
// buyer, for Article ("" = every article), is Factor units Code of the
// supplier. UnitKey and ArticleKey are the forms looked up (pkg/units).
type UnitRow struct {
	Unit, UnitKey       string
	Article, ArticleKey string
	Code                string
	Factor              string // canonical decimal > 0
	UpdatedAt           time.Time
}

// PutUnits upserts rows into the client's unit table in one transaction;
// replace first removes every row the client had, so the rows become its
// whole table.
func (s *Store) PutUnits(ctx context.Context, clientID string, rows []UnitRow, replace bool) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if replace {
			if _, err := tx.db.Exec(ctx, `DELETE FROM unit_conversions WHERE client_id = $1`, clientID); err != nil {
				return translate(err, "replace units")
			}
		}
		for _, r := range rows {
			const q = `INSERT INTO unit_conversions (client_id, unit, unit_key, article, article_key, code, factor)
				VALUES ($1, $2, $3, $4, $5, $6, $7::numeric)
				ON CONFLICT (client_id, unit_key, article_key) DO UPDATE SET unit = EXCLUDED.unit,
					article = EXCLUDED.article, code = EXCLUDED.code, factor = EXCLUDED.factor, updated_at = now()`
			if _, err := tx.db.Exec(ctx, q, clientID, r.Unit, r.UnitKey, r.Article, r.ArticleKey, r.Code, r.Factor); err != nil {
				return translate(err, "put unit")
			}
		}
		return nil
	})
}

// Units returns the client's unit rows for the given unit keys (all rows
// when all is set), ordered by unit and article: one statement per order,
// whatever its number of lines.
func (s *Store) Units(ctx context.Context, clientID string, keys []string, all bool) ([]UnitRow, error) {
	rows, err := s.db.Query(ctx, `SELECT unit, unit_key, article, article_key, code, factor::text, updated_at
		FROM unit_conversions WHERE client_id = $1 AND ($2 OR unit_key = ANY($3))
		ORDER BY unit_key, article_key`, clientID, all, keys)
	if err != nil {
		return nil, translate(err, "list units")
	}
	defer rows.Close()
	var out []UnitRow
	for rows.Next() {
		var r UnitRow
		if err := rows.Scan(&r.Unit, &r.UnitKey, &r.Article, &r.ArticleKey, &r.Code, &r.Factor, &r.UpdatedAt); err != nil {
			return nil, translate(err, "scan unit")
		}
		out = append(out, r)
	}
	return out, translate(rows.Err(), "list units")
}

// DeleteUnit removes one row of the client's unit table. ENOTFOUND when
// there was none.
func (s *Store) DeleteUnit(ctx context.Context, clientID, unitKey, articleKey string) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM unit_conversions WHERE client_id = $1 AND unit_key = $2 AND article_key = $3`,
		clientID, unitKey, articleKey)
	if err != nil {
		return translate(err, "delete unit")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "unit %q (article %q) not found", unitKey, articleKey)
	}
	return nil
}
