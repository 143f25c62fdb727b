package store

import (
	"context"
	"crypto/subtle"
	"regexp"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
)

// Operator is a named person of the ops console (issue 27, "who did it"):
// what it does there is recorded under its name.
type Operator struct {
	Name string
	// Clients limits the operator to these clients' documents; nil: every
	// client.
	Clients []string
	// HasToken: the operator can log in with a token of its own. Without
	// one it is known only through the trusted proxy header.
	HasToken  bool
	CreatedAt time.Time
}

// SharedOperatorName is the name the history records for the shared
// INTAKE_OPS_TOKEN; no account may take it.
const SharedOperatorName = "ops-console"

// operatorName is what an account may be called: a user name or e-mail
// address as an identity-aware proxy passes it (the migration's CHECK
// says the same).
var operatorName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$`)

// ValidOperatorName reports whether name may name an operator account.
func ValidOperatorName(name string) bool {
	return operatorName.MatchString(name) && name != SharedOperatorName
}

// AddOperator creates an operator; token is the SHA-256 of its login token
// (nil: none, proxy header only). Returns EINVALID for a malformed name or
// an unknown client, ECONFLICT when the name is taken.
func (s *Store) AddOperator(ctx context.Context, op Operator, token *[32]byte) error {
	if !ValidOperatorName(op.Name) {
		return document.Errorf(document.EINVALID, "operator name %q must match [A-Za-z0-9][A-Za-z0-9._@+-]{0,127} and not be %s",
			op.Name, SharedOperatorName)
	}
	if err := s.checkClients(ctx, op.Clients); err != nil {
		return err
	}
	_, err := s.db.Exec(ctx, `INSERT INTO operators (name, token_sha256, clients) VALUES ($1, $2, $3)`,
		op.Name, hashBytes(token), op.Clients)
	if document.ErrorKind(translate(err, "")) == document.ECONFLICT {
		return document.Errorf(document.ECONFLICT, "operator %s exists already", op.Name)
	}
	return translate(err, "add operator")
}

// hashBytes is a token hash as bound: NULL for none.
func hashBytes(h *[32]byte) []byte {
	if h == nil {
		return nil
	}
	return h[:]
}

// checkClients refuses a client list that is empty but not nil (which
// would see nothing) or names a client that does not exist (a typo would
// otherwise show an operator an empty console).
func (s *Store) checkClients(ctx context.Context, clients []string) error {
	if clients == nil {
		return nil
	}
	if len(clients) == 0 {
		return document.Errorf(document.EINVALID, "an operator's client list names at least one client (none: every client)")
	}
	for _, id := range clients {
		if !document.ValidClientID(id) {
			return document.Errorf(document.EINVALID, "client id %q must match [a-z0-9_-]{1,64}", id)
		}
	}
	var unknown []string
	err := s.db.QueryRow(ctx, `SELECT coalesce(array_agg(c ORDER BY c), '{}') FROM unnest($1::text[]) c
		WHERE NOT EXISTS (SELECT 1 FROM clients WHERE id = c)`, clients).Scan(&unknown)
	if err != nil {
		return translate(err, "check operator clients")
	}
	if len(unknown) > 0 {
		return document.Errorf(document.EINVALID, "no such client: %s", strings.Join(unknown, ", "))
	}
	return nil
}

const operatorColumns = `name, clients, token_sha256 IS NOT NULL, created_at`

func scanOperator(row pgx.Row) (Operator, error) {
	var op Operator
	err := row.Scan(&op.Name, &op.Clients, &op.HasToken, &op.CreatedAt)
	return op, err
}

// Operators lists every operator by name.
func (s *Store) Operators(ctx context.Context) ([]Operator, error) {
	rows, err := s.db.Query(ctx, `SELECT `+operatorColumns+` FROM operators ORDER BY name`)
	if err != nil {
		return nil, translate(err, "list operators")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Operator, error) { return scanOperator(r) })
	return out, translate(err, "list operators")
}

// Operator returns one operator. Returns ENOTFOUND for an unknown name.
func (s *Store) Operator(ctx context.Context, name string) (Operator, error) {
	op, err := scanOperator(s.db.QueryRow(ctx, `SELECT `+operatorColumns+` FROM operators WHERE name = $1`, name))
	if err != nil {
		return op, operatorNotFound(err, name)
	}
	return op, nil
}

func operatorNotFound(err error, name string) error {
	if err == pgx.ErrNoRows {
		return document.Errorf(document.ENOTFOUND, "no operator %s", name)
	}
	return translate(err, "get operator")
}

// OperatorByToken authenticates an operator's login token as ClientByToken
// does a client's: the lookup sees only the hash, which is then compared in
// constant time. Returns EUNAUTHENTICATED for an unknown token.
func (s *Store) OperatorByToken(ctx context.Context, token string) (Operator, error) {
	h := TokenHash(token)
	var stored []byte
	var op Operator
	err := s.db.QueryRow(ctx, `SELECT token_sha256, `+operatorColumns+` FROM operators WHERE token_sha256 = $1`, h[:]).
		Scan(&stored, &op.Name, &op.Clients, &op.HasToken, &op.CreatedAt)
	if err == pgx.ErrNoRows || err == nil && subtle.ConstantTimeCompare(stored, h[:]) != 1 {
		return Operator{}, document.Errorf(document.EUNAUTHENTICATED, "invalid operator token")
	}
	if err != nil {
		return Operator{}, translate(err, "authenticate operator")
	}
	return op, nil
}

// RemoveOperator deletes an operator; its sessions end with it (the
// sessions' foreign key cascades). Returns ENOTFOUND for an unknown name.
func (s *Store) RemoveOperator(ctx context.Context, name string) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM operators WHERE name = $1`, name)
	if err != nil {
		return translate(err, "remove operator")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "no operator %s", name)
	}
	return nil
}

// SetOperatorToken replaces an operator's login token (nil: none) and ends
// the sessions opened with the old one, in one transaction: a token is
// rotated because it may have leaked, and so may a session opened with it.
// Sessions opened through the proxy header stay. Returns ENOTFOUND for an
// unknown name.
func (s *Store) SetOperatorToken(ctx context.Context, name string, token *[32]byte) error {
	return s.WithTx(ctx, func(tx *Store) error {
		tag, err := tx.db.Exec(ctx, `UPDATE operators SET token_sha256 = $2, updated_at = now() WHERE name = $1`, name, hashBytes(token))
		if err != nil {
			return translate(err, "set operator token")
		}
		if tag.RowsAffected() == 0 {
			return document.Errorf(document.ENOTFOUND, "no operator %s", name)
		}
		_, err = tx.db.Exec(ctx, `UPDATE ops_sessions SET revoked_at = now()
			WHERE operator = $1 AND token_tag = $2 AND revoked_at IS NULL`, name, OpsSessionByToken)
		return translate(err, "end operator sessions")
	})
}

// SetOperatorClients changes the clients an operator is limited to (nil:
// every client); it applies to its open sessions at their next request.
// Returns ENOTFOUND for an unknown name, EINVALID for an unknown client.
func (s *Store) SetOperatorClients(ctx context.Context, name string, clients []string) error {
	if err := s.checkClients(ctx, clients); err != nil {
		return err
	}
	tag, err := s.db.Exec(ctx, `UPDATE operators SET clients = $2, updated_at = now() WHERE name = $1`, name, clients)
	if err != nil {
		return translate(err, "set operator clients")
	}
	if tag.RowsAffected() == 0 {
		return document.Errorf(document.ENOTFOUND, "no operator %s", name)
	}
	return nil
}
