package store

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// The console's lists for an operator limited to some clients (Operator's
// Clients): each takes the client list, nil for every client, and reads
// only those clients' documents, so another client's rows never leave the
// database. A nil slice binds as NULL.

// inClients is the filter the queries below share; $1 is the client list.
const inClients = `($1::text[] IS NULL OR client_id = ANY ($1))`

// OpsStateCounts counts the clients' documents per state (states without
// documents are absent).
func (s *Store) OpsStateCounts(ctx context.Context, clients []string) (map[document.State]int, error) {
	rows, err := s.db.Query(ctx, `SELECT state, count(*) FROM documents WHERE `+inClients+` GROUP BY state`, clients)
	if err != nil {
		return nil, translate(err, "count documents")
	}
	defer rows.Close()
	out := map[document.State]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, translate(err, "scan count")
		}
		out[document.State(st)] = n
	}
	return out, translate(rows.Err(), "count documents")
}

// OpsDocumentsOf lists up to limit of the clients' documents in state,
// most recently changed first, each with its newest error (OpsDocument).
func (s *Store) OpsDocumentsOf(ctx context.Context, clients []string, state document.State, limit int) ([]OpsDocument, error) {
	// The subquery reads one index range (document_events_document) per
	// listed document, so the list costs limit small lookups.
	rows, err := s.db.Query(ctx, `SELECT `+documentColumns+`,
			coalesce((SELECT e.detail FROM document_events e
				WHERE e.document_id = documents.id AND e.detail IS NOT NULL AND e.detail <> ''
				ORDER BY e.id DESC LIMIT 1), '')
		FROM documents WHERE `+inClients+` AND state = $2
		ORDER BY updated_at DESC, id LIMIT $3`, clients, state, limit)
	if err != nil {
		return nil, translate(err, "list ops documents")
	}
	defer rows.Close()
	var out []OpsDocument
	for rows.Next() {
		var o OpsDocument
		d, err := scanDocument(withExtra{rows, []any{&o.LastError}})
		if err != nil {
			return nil, translate(err, "scan ops document")
		}
		o.Document = d
		out = append(out, o)
	}
	return out, translate(rows.Err(), "list ops documents")
}

// OpsRecentDocumentsOf lists the limit most recently changed of the
// clients' documents, of any state.
func (s *Store) OpsRecentDocumentsOf(ctx context.Context, clients []string, limit int) ([]document.Document, error) {
	return s.queryDocuments(ctx, "recent documents", `SELECT `+documentColumns+` FROM documents WHERE `+inClients+`
		ORDER BY updated_at DESC, id LIMIT $2`, clients, limit)
}

// TemplateUsageOf returns the usage rows of the clients' attempts started
// at or after since (the console's templates page).
func (s *Store) TemplateUsageOf(ctx context.Context, clients []string, since time.Time) ([]TemplateUsage, error) {
	// A built-in template's attempts (no templates row) count as id 0.
	rows, err := s.db.Query(ctx, `SELECT coalesce(a.template_id, 0), a.template_version, d.state, count(*)
		FROM document_attempts a JOIN documents d ON d.id = a.document_id AND d.attempt = a.attempt
		WHERE a.started_at >= $2 AND ($1::text[] IS NULL OR d.client_id = ANY ($1))
		GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, clients, since)
	if err != nil {
		return nil, translate(err, "template usage")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TemplateUsage, error) {
		var u TemplateUsage
		var state string
		err := r.Scan(&u.TemplateID, &u.Version, &state, &u.Count)
		u.State = document.State(state)
		return u, err
	})
	return out, translate(err, "template usage")
}
