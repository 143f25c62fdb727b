package store

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// A client's price lists (issue 28, migration 00023): one per buyer, ""
// for every buyer. The store keeps entries as validated by pkg/pricelist
// (pkg/pricing converts); decimals travel as canonical strings.

// CodePriceListNotFound is the code of a price list that does not exist.
const CodePriceListNotFound = "price_list_not_found"

// PriceEntry is one stored price list entry.
type PriceEntry struct {
	Buyer        string
	Line         int // in the imported CSV
	Article      string
	ArticleKey   string
	Currency     string
	UnitPrice    string
	PriceBasis   string
	Unit         string
	UnitCode     string
	ValidFrom    *time.Time
	ValidTo      *time.Time
	TolerancePct string
}

// PriceListInfo describes one stored price list.
type PriceListInfo struct {
	ClientID   string
	Buyer      string
	Entries    int
	SHA256     []byte
	ImportedBy string
	ImportedAt time.Time
}

// ReplacePriceList stores entries as the client's price list for buyer,
// replacing the list it had, in one transaction: a reader sees the old list
// or the new one, never a mix. Returns ENOTFOUND for an unknown client.
func (s *Store) ReplacePriceList(ctx context.Context, info PriceListInfo, entries []PriceEntry) (PriceListInfo, error) {
	info.Entries = len(entries)
	err := s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `DELETE FROM price_lists WHERE client_id = $1 AND buyer = $2`, info.ClientID, info.Buyer); err != nil {
			return translate(err, "replace price list")
		}
		err := tx.db.QueryRow(ctx, `INSERT INTO price_lists (client_id, buyer, entries, sha256, imported_by)
			SELECT id, $2, $3, $4, $5 FROM clients WHERE id = $1 RETURNING imported_at`,
			info.ClientID, info.Buyer, info.Entries, info.SHA256, info.ImportedBy).Scan(&info.ImportedAt)
		if err != nil {
			return clientNotFound(err, info.ClientID)
		}
		return tx.insertPriceEntries(ctx, info, entries)
	})
	return info, err
}

// insertPriceEntries writes a list's entries in one statement.
func (s *Store) insertPriceEntries(ctx context.Context, info PriceListInfo, es []PriceEntry) error {
	n := len(es)
	lines := make([]int32, n)
	article, key, cur, price, basis, unit, code, tol := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	from, to := make([]*time.Time, n), make([]*time.Time, n)
	for i, e := range es {
		lines[i], article[i], key[i], cur[i], price[i], basis[i] = int32(e.Line), e.Article, e.ArticleKey, e.Currency, e.UnitPrice, e.PriceBasis
		unit[i], code[i], from[i], to[i], tol[i] = e.Unit, e.UnitCode, e.ValidFrom, e.ValidTo, e.TolerancePct
	}
	_, err := s.db.Exec(ctx, `INSERT INTO price_list_entries (client_id, buyer, line, article, article_key, currency,
			unit_price, price_basis, unit, unit_code, valid_from, valid_to, tolerance_pct)
		SELECT $1, $2, * FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::numeric[],
			$9::text[], $10::text[], $11::date[], $12::date[], $13::numeric[])`,
		info.ClientID, info.Buyer, lines, article, key, cur, price, basis, unit, code, from, to, tol)
	return translate(err, "insert price list entries")
}

// PriceLists lists a client's price lists, the client-wide one first.
func (s *Store) PriceLists(ctx context.Context, clientID string) ([]PriceListInfo, error) {
	rows, err := s.db.Query(ctx, `SELECT client_id, buyer, entries, sha256, imported_by, imported_at FROM price_lists
		WHERE client_id = $1 ORDER BY buyer`, clientID)
	if err != nil {
		return nil, translate(err, "list price lists")
	}
	defer rows.Close()
	var out []PriceListInfo
	for rows.Next() {
		var p PriceListInfo
		if err := rows.Scan(&p.ClientID, &p.Buyer, &p.Entries, &p.SHA256, &p.ImportedBy, &p.ImportedAt); err != nil {
			return nil, translate(err, "scan price list")
		}
		out = append(out, p)
	}
	return out, translate(rows.Err(), "list price lists")
}

// priceEntryColumns are what scanPriceEntry reads (of price_list_entries e).
const priceEntryColumns = `e.buyer, e.line, e.article, e.article_key, e.currency, e.unit_price::text, e.price_basis::text,
	e.unit, e.unit_code, e.valid_from, e.valid_to, e.tolerance_pct::text`

func priceEntryDest(e *PriceEntry) []any {
	return []any{&e.Buyer, &e.Line, &e.Article, &e.ArticleKey, &e.Currency, &e.UnitPrice, &e.PriceBasis, &e.Unit,
		&e.UnitCode, &e.ValidFrom, &e.ValidTo, &e.TolerancePct}
}

// PriceList returns one price list with its entries in their CSV order.
// Returns ENOTFOUND (price_list_not_found) when the client has none for
// buyer.
func (s *Store) PriceList(ctx context.Context, clientID, buyer string) (PriceListInfo, []PriceEntry, error) {
	info := PriceListInfo{ClientID: clientID, Buyer: buyer}
	err := s.db.QueryRow(ctx, `SELECT entries, sha256, imported_by, imported_at FROM price_lists
		WHERE client_id = $1 AND buyer = $2`, clientID, buyer).Scan(&info.Entries, &info.SHA256, &info.ImportedBy, &info.ImportedAt)
	if err == pgx.ErrNoRows {
		return info, nil, priceListNotFound(clientID, buyer)
	}
	if err != nil {
		return info, nil, translate(err, "price list")
	}
	rows, err := s.db.Query(ctx, `SELECT `+priceEntryColumns+` FROM price_list_entries e
		WHERE e.client_id = $1 AND e.buyer = $2 ORDER BY e.line`, clientID, buyer)
	if err != nil {
		return info, nil, translate(err, "price list entries")
	}
	es, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PriceEntry, error) {
		var e PriceEntry
		return e, r.Scan(priceEntryDest(&e)...)
	})
	return info, es, translate(err, "price list entries")
}

func priceListNotFound(clientID, buyer string) error {
	if buyer == "" {
		return document.CodedErrorf(document.ENOTFOUND, CodePriceListNotFound, "client %s has no price list for every buyer", clientID)
	}
	return document.CodedErrorf(document.ENOTFOUND, CodePriceListNotFound, "client %s has no price list for buyer %s", clientID, buyer)
}

// DeletePriceList removes one price list. Returns ENOTFOUND
// (price_list_not_found) when there is none.
func (s *Store) DeletePriceList(ctx context.Context, clientID, buyer string) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM price_lists WHERE client_id = $1 AND buyer = $2`, clientID, buyer)
	if err != nil {
		return translate(err, "delete price list")
	}
	if tag.RowsAffected() == 0 {
		return priceListNotFound(clientID, buyer)
	}
	return nil
}

// PriceCheck reads in one statement what checking an order of buyer needs:
// the client's flag policy and the entries of its lists for buyer and for
// every buyer that name one of articles (pricelist.ArticleKey). Returns
// ENOTFOUND for an unknown client.
func (s *Store) PriceCheck(ctx context.Context, clientID, buyer string, articles []string) (document.FlagPolicy, []PriceEntry, error) {
	rows, err := s.db.Query(ctx, `SELECT c.flags, e.line IS NOT NULL, `+joinedPriceEntryColumns+`
		FROM clients c LEFT JOIN price_list_entries e ON e.client_id = c.id AND e.buyer IN ('', $2)
			AND e.article_key = ANY($3::text[])
		WHERE c.id = $1`, clientID, buyer, articles)
	if err != nil {
		return "", nil, translate(err, "price check")
	}
	defer rows.Close()
	var policy document.FlagPolicy
	var out []PriceEntry
	found := false
	for rows.Next() {
		var e PriceEntry
		var has bool
		if err := rows.Scan(append([]any{&policy, &has}, priceEntryDest(&e)...)...); err != nil {
			return "", nil, translate(err, "scan price check")
		}
		found = true
		if has {
			out = append(out, e)
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, translate(err, "price check")
	}
	if !found {
		return "", nil, document.Errorf(document.ENOTFOUND, "client %s not found", clientID)
	}
	return policy, out, nil
}

// joinedPriceEntryColumns are priceEntryColumns of a LEFT JOIN, non-null
// (the entry is absent when e.line is NULL).
const joinedPriceEntryColumns = `coalesce(e.buyer, ''), coalesce(e.line, 0), coalesce(e.article, ''), coalesce(e.article_key, ''),
		coalesce(e.currency, ''), coalesce(e.unit_price::text, ''), coalesce(e.price_basis::text, ''),
		coalesce(e.unit, ''), coalesce(e.unit_code, ''), e.valid_from, e.valid_to, coalesce(e.tolerance_pct::text, '')`

// SetFlagPolicy sets what a client's flagged orders get. Returns ENOTFOUND
// for an unknown client, EINVALID for an unknown policy.
func (s *Store) SetFlagPolicy(ctx context.Context, clientID string, p document.FlagPolicy) error {
	p, err := document.ParseFlagPolicy(string(p))
	if err != nil {
		return err
	}
	tag, err := s.db.Exec(ctx, `UPDATE clients SET flags = $2, updated_at = now() WHERE id = $1`, clientID, p)
	if err != nil {
		return translate(err, "set flags")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "client %s not found", clientID)
	}
	return nil
}

// FlagPolicy returns a client's flag policy. Returns ENOTFOUND for an
// unknown client.
func (s *Store) FlagPolicy(ctx context.Context, clientID string) (document.FlagPolicy, error) {
	var p document.FlagPolicy
	if err := s.db.QueryRow(ctx, `SELECT flags FROM clients WHERE id = $1`, clientID).Scan(&p); err != nil {
		return "", clientNotFound(err, clientID)
	}
	return p, nil
}

// clientNotFound is ENOTFOUND for no rows of a client's query.
func clientNotFound(err error, clientID string) error {
	if err == pgx.ErrNoRows {
		return document.Errorf(document.ENOTFOUND, "client %s not found", clientID)
	}
	return translate(err, "client "+clientID)
}
