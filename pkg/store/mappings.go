package store

import (
	"context"

	"github.com/docintake/docintake/pkg/document"
)

// Mapping is one master-data entry of a client: in table kind, key maps to
// value.
type Mapping struct {
	Kind  string
	Key   string
	Value string
}

// PutMappings upserts mappings for a client in one transaction.
func (s *Store) PutMappings(ctx context.Context, clientID string, ms []Mapping) error {
	return s.WithTx(ctx, func(tx *Store) error {
		for _, m := range ms {
			const q = `INSERT INTO mappings (client_id, kind, key, value) VALUES ($1, $2, $3, $4)
				ON CONFLICT (client_id, kind, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`
			if _, err := tx.db.Exec(ctx, q, clientID, m.Kind, m.Key, m.Value); err != nil {
				return translate(err, "put mapping")
			}
		}
		return nil
	})
}

// LookupMapping returns the client's value for key in table kind; ok is false
// when there is none.
func (s *Store) LookupMapping(ctx context.Context, clientID, kind, key string) (value string, ok bool, err error) {
	err = s.db.QueryRow(ctx, `SELECT value FROM mappings WHERE client_id = $1 AND kind = $2 AND key = $3`, clientID, kind, key).Scan(&value)
	if err != nil {
		if document.ErrorKind(translate(err, "")) == document.ENOTFOUND {
			return "", false, nil
		}
		return "", false, translate(err, "lookup mapping")
	}
	return value, true, nil
}

// Mappings lists a client's mappings of one kind ("" = all kinds).
func (s *Store) Mappings(ctx context.Context, clientID, kind string) ([]Mapping, error) {
	rows, err := s.db.Query(ctx, `SELECT kind, key, value FROM mappings WHERE client_id = $1 AND ($2 = '' OR kind = $2)
		ORDER BY kind, key`, clientID, kind)
	if err != nil {
		return nil, translate(err, "list mappings")
	}
	defer rows.Close()
	var out []Mapping
	for rows.Next() {
		var m Mapping
		if err := rows.Scan(&m.Kind, &m.Key, &m.Value); err != nil {
			return nil, translate(err, "scan mapping")
		}
		out = append(out, m)
	}
	return out, translate(rows.Err(), "list mappings")
}

// DeleteMapping removes one mapping. Returns ENOTFOUND if it did not exist.
func (s *Store) DeleteMapping(ctx context.Context, clientID, kind, key string) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM mappings WHERE client_id = $1 AND kind = $2 AND key = $3`, clientID, kind, key)
	if err != nil {
		return translate(err, "delete mapping")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "mapping %s/%s not found", kind, key)
	}
	return nil
}
