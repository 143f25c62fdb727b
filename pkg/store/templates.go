package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TemplatesChannel is the PostgreSQL NOTIFY channel on which every change of
// the template catalogue is announced (payload: the schema it happened in).
const TemplatesChannel = "docintake_templates"

// Template error codes clients and the CLI see.
const (
	CodeTemplateNotFound = "template_not_found"
	CodeTemplateConflict = "template_conflict"
)

// TemplateSample is one file of a version's NAME.samples folder (X.pdf,
// X.txt or X.json).
type TemplateSample struct {
	Name    string
	Content []byte
}

// TemplateInfo is a template with its current version, as listed.
type TemplateInfo struct {
	ID       int64
	Name     string
	ClientID string // "" for a global template
	Version  int    // the current version
	SHA256   []byte // of the current version
	Enabled  bool
	Deleted  bool
	PartyIDs []string
	// UpdatedAt is when the pointer last moved (push, rollback, enable, …).
	UpdatedAt  time.Time
	LastUsedAt *time.Time
}

// TemplateVersion is one immutable version.
type TemplateVersion struct {
	TemplateID int64
	Name       string
	ClientID   string
	Version    int
	Filename   string
	Content    []byte
	SHA256     []byte
	PartyIDs   []string
	Comment    string
	PushedBy   string
	Forced     bool
	PushedAt   time.Time
	Samples    []TemplateSample // filled by TemplateVersion only
}

// TemplatePush is a new version to store.
type TemplatePush struct {
	Name     string
	ClientID string // "" for global
	Filename string // as pushed (NAME.yml, NAME.json); only its extension matters
	Content  []byte
	PartyIDs []string
	Comment  string
	PushedBy string
	Forced   bool
	Samples  []TemplateSample
	// IfVersion, when set, is the version the pusher based its change on:
	// the push fails with ECONFLICT when the current version is another
	// (0 = the template must not exist yet).
	IfVersion *int
}

// PushResult says what a push did.
type PushResult struct {
	Version int
	// Changed is false when the content and samples equal the current
	// version's (and the template was not deleted): nothing was stored.
	Changed bool
}

// templateLock serialises catalogue writes (push, rollback, enable): the
// party-id check spans rows, and version numbers must not race.
const templateLock = 0x64697470 // "ditp"

// PushTemplate stores p as the next version of its template (version 1 for a
// new one) and points the template at it, in one transaction; the catalogue
// is told through TemplatesChannel on commit. Content and samples equal to
// the current version store nothing (Changed false), unless the template
// is deleted (a push revives it, enabled, with the next version). A new
// version leaves the enabled flag alone: only enable/disable change it, so
// a fix pushed to a disabled template waits for an explicit enable. Returns
// ECONFLICT (code template_conflict) when another template of the same scope
// claims one of p's party ids, or when IfVersion does not match.
func (s *Store) PushTemplate(ctx context.Context, p TemplatePush) (PushResult, error) {
	var res PushResult
	sum := sha256.Sum256(p.Content)
	err := s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, templateLock); err != nil {
			return translate(err, "lock templates")
		}
		cur, err := tx.templateByName(ctx, p.ClientID, p.Name, true)
		exists := err == nil
		if err != nil && document.ErrorKind(err) != document.ENOTFOUND {
			return err
		}
		if p.IfVersion != nil {
			if err := versionConflict(p.Name, cur, exists, *p.IfVersion); err != nil {
				return err
			}
		}
		if exists && !cur.Deleted && bytes.Equal(cur.SHA256, sum[:]) {
			same, err := tx.sameSamples(ctx, cur.ID, cur.Version, p.Samples)
			if err != nil {
				return err
			}
			if same {
				res = PushResult{Version: cur.Version}
				return nil
			}
		}
		if err := tx.checkPartyIDs(ctx, p.ClientID, p.Name, p.PartyIDs); err != nil {
			return err
		}
		id, version := cur.ID, cur.Version+1
		if !exists {
			version = 1
			err = tx.db.QueryRow(ctx, `INSERT INTO templates (name, client_id, current_version, party_ids)
				VALUES ($1, $2, 1, $3) RETURNING id`, p.Name, nullable(p.ClientID), nonNil(p.PartyIDs)).Scan(&id)
			if err != nil {
				return translate(err, "insert template")
			}
		}
		if err := tx.insertVersion(ctx, id, version, p, sum[:]); err != nil {
			return err
		}
		if exists {
			if _, err := tx.db.Exec(ctx, `UPDATE templates SET current_version = $2, party_ids = $3,
				enabled = CASE WHEN deleted THEN true ELSE enabled END, deleted = false, updated_at = now() WHERE id = $1`, id, version, nonNil(p.PartyIDs)); err != nil {
				return translate(err, "update template")
			}
		}
		res = PushResult{Version: version, Changed: true}
		return nil
	})
	return res, err
}

func (s *Store) insertVersion(ctx context.Context, id int64, version int, p TemplatePush, sum []byte) error {
	if _, err := s.db.Exec(ctx, `INSERT INTO template_versions (template_id, version, filename, content, sha256,
			party_ids, comment, pushed_by, forced) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		id, version, p.Filename, p.Content, sum, nonNil(p.PartyIDs), p.Comment, p.PushedBy, p.Forced); err != nil {
		return translate(err, "insert template version")
	}
	for _, sm := range p.Samples {
		if _, err := s.db.Exec(ctx, `INSERT INTO template_samples (template_id, version, name, content)
			VALUES ($1, $2, $3, $4)`, id, version, sm.Name, sm.Content); err != nil {
			return translate(err, "insert template sample")
		}
	}
	return nil
}

func (s *Store) sameSamples(ctx context.Context, id int64, version int, samples []TemplateSample) (bool, error) {
	have, err := s.templateSamples(ctx, id, version)
	if err != nil {
		return false, err
	}
	if len(have) != len(samples) {
		return false, nil
	}
	want := slices.Clone(samples)
	slices.SortFunc(want, func(a, b TemplateSample) int { return strings.Compare(a.Name, b.Name) })
	for i := range have {
		if have[i].Name != want[i].Name || !bytes.Equal(have[i].Content, want[i].Content) {
			return false, nil
		}
	}
	return true, nil
}

func (s *Store) templateSamples(ctx context.Context, id int64, version int) ([]TemplateSample, error) {
	rows, err := s.db.Query(ctx, `SELECT name, content FROM template_samples WHERE template_id = $1 AND version = $2
		ORDER BY name`, id, version)
	if err != nil {
		return nil, translate(err, "list template samples")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TemplateSample, error) {
		var sm TemplateSample
		return sm, r.Scan(&sm.Name, &sm.Content)
	})
	return out, translate(err, "list template samples")
}

// checkPartyIDs refuses party ids that another live template of the same
// scope claims (a client's own template may claim a global one's: it wins
// for that client).
func (s *Store) checkPartyIDs(ctx context.Context, clientID, name string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	var other, id string
	err := s.db.QueryRow(ctx, `SELECT t.name, p FROM templates t, unnest(t.party_ids) p
		WHERE coalesce(t.client_id, '') = $1 AND t.name <> $2 AND NOT t.deleted AND p = ANY($3) LIMIT 1`,
		clientID, name, ids).Scan(&other, &id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return translate(err, "check party ids")
	}
	return document.CodedErrorf(document.ECONFLICT, CodeTemplateConflict,
		"party_id %q is already claimed by template %s", id, other)
}

const templateInfoColumns = `t.id, t.name, coalesce(t.client_id, ''), t.current_version, v.sha256, t.enabled,
	t.deleted, t.party_ids, t.updated_at, t.last_used_at`

func scanTemplateInfo(row pgx.Row) (TemplateInfo, error) {
	var t TemplateInfo
	err := row.Scan(&t.ID, &t.Name, &t.ClientID, &t.Version, &t.SHA256, &t.Enabled, &t.Deleted, &t.PartyIDs,
		&t.UpdatedAt, &t.LastUsedAt)
	return t, err
}

func templateNotFound(err error, clientID, name string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		scope := "global"
		if clientID != "" {
			scope = "client " + clientID
		}
		return document.CodedErrorf(document.ENOTFOUND, CodeTemplateNotFound, "no %s template named %q", scope, name)
	}
	return translate(err, "get template")
}

// CheckTemplateVersion returns PushTemplate's conflict error when the
// caller's template name is not at version want (0: does not exist). It lets
// a front end refuse a stale change before the costly sample runs; the push
// checks again under its lock, so a race in between is still caught.
func (s *Store) CheckTemplateVersion(ctx context.Context, clientID, name string, want int) error {
	cur, err := s.templateByName(ctx, clientID, name, true)
	if err != nil && document.ErrorKind(err) != document.ENOTFOUND {
		return err
	}
	return versionConflict(name, cur, err == nil, want)
}

// versionConflict is the If-Match rule: a deleted template counts as absent
// (version 0).
func versionConflict(name string, cur TemplateInfo, exists bool, want int) error {
	have := 0
	if exists && !cur.Deleted {
		have = cur.Version
	}
	if have != want {
		return document.CodedErrorf(document.ECONFLICT, CodeTemplateConflict,
			"template %s is at version %d, not %d", name, have, want)
	}
	return nil
}

// templateByName returns the template of exactly this scope.
func (s *Store) templateByName(ctx context.Context, clientID, name string, withDeleted bool) (TemplateInfo, error) {
	t, err := scanTemplateInfo(s.db.QueryRow(ctx, `SELECT `+templateInfoColumns+`
		FROM templates t JOIN template_versions v ON v.template_id = t.id AND v.version = t.current_version
		WHERE coalesce(t.client_id, '') = $1 AND t.name = $2 AND (NOT t.deleted OR $3)`, clientID, name, withDeleted))
	if err != nil {
		return t, templateNotFound(err, clientID, name)
	}
	return t, nil
}

// Template returns the template name of exactly the scope clientID ("" =
// global). Returns ENOTFOUND (code template_not_found) when there is none or
// it was deleted.
func (s *Store) Template(ctx context.Context, clientID, name string) (TemplateInfo, error) {
	return s.templateByName(ctx, clientID, name, false)
}

// TemplatesFilter selects templates for ListTemplates.
type TemplatesFilter struct {
	// All lists every scope; otherwise the global templates plus those of
	// ClientID (when set).
	All      bool
	ClientID string
	// OnlyClient drops the global templates (a client's own list).
	OnlyClient bool
}

// ListTemplates returns the live (not deleted) templates of f, global first,
// then by client and name. Disabled templates are listed.
func (s *Store) ListTemplates(ctx context.Context, f TemplatesFilter) ([]TemplateInfo, error) {
	rows, err := s.db.Query(ctx, `SELECT `+templateInfoColumns+`
		FROM templates t JOIN template_versions v ON v.template_id = t.id AND v.version = t.current_version
		WHERE NOT t.deleted AND ($1 OR (t.client_id IS NULL AND NOT $3) OR t.client_id = nullif($2, ''))
		ORDER BY t.client_id NULLS FIRST, t.name`, f.All, f.ClientID, f.OnlyClient)
	if err != nil {
		return nil, translate(err, "list templates")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TemplateInfo, error) { return scanTemplateInfo(r) })
	return out, translate(err, "list templates")
}

// CatalogueTemplates returns every live template of every scope with its
// current version: what running services serve.
func (s *Store) CatalogueTemplates(ctx context.Context) ([]TemplateInfo, error) {
	return s.ListTemplates(ctx, TemplatesFilter{All: true})
}

const versionColumns = `v.template_id, t.name, coalesce(t.client_id, ''), v.version, v.filename, v.content, v.sha256,
	v.party_ids, v.comment, v.pushed_by, v.forced, v.pushed_at`

func scanVersion(row pgx.Row) (TemplateVersion, error) {
	var v TemplateVersion
	err := row.Scan(&v.TemplateID, &v.Name, &v.ClientID, &v.Version, &v.Filename, &v.Content, &v.SHA256, &v.PartyIDs,
		&v.Comment, &v.PushedBy, &v.Forced, &v.PushedAt)
	return v, err
}

// TemplateVersionByID returns version of template id with its samples.
// Returns ENOTFOUND (template_not_found).
func (s *Store) TemplateVersionByID(ctx context.Context, id int64, version int) (TemplateVersion, error) {
	v, err := s.TemplateSource(ctx, id, version)
	if err != nil {
		return v, err
	}
	v.Samples, err = s.templateSamples(ctx, id, version)
	return v, err
}

// TemplateSource is TemplateVersionByID without the samples: what compiling
// a version needs. Samples can be megabytes of PDF, and the catalogue
// compiles every served version at start and after each change.
func (s *Store) TemplateSource(ctx context.Context, id int64, version int) (TemplateVersion, error) {
	v, err := scanVersion(s.db.QueryRow(ctx, `SELECT `+versionColumns+` FROM template_versions v
		JOIN templates t ON t.id = v.template_id WHERE v.template_id = $1 AND v.version = $2`, id, version))
	if err != nil {
		return v, templateNotFound(err, "", fmt.Sprintf("#%d v%d", id, version))
	}
	return v, nil
}

// TemplateVersion returns version (0 = the current one) of the template name
// in scope clientID, with its samples. Returns ENOTFOUND
// (template_not_found) when the template or version does not exist.
func (s *Store) TemplateVersion(ctx context.Context, clientID, name string, version int) (TemplateVersion, error) {
	t, err := s.templateByName(ctx, clientID, name, true)
	if err != nil {
		return TemplateVersion{}, err
	}
	if version == 0 {
		version = t.Version
	}
	v, err := s.TemplateVersionByID(ctx, t.ID, version)
	if document.ErrorKind(err) == document.ENOTFOUND {
		return v, document.CodedErrorf(document.ENOTFOUND, CodeTemplateNotFound, "template %s has no version %d", name, version)
	}
	return v, err
}

// TemplateHistory returns every version of the template name in scope
// clientID, oldest first, without content. Returns ENOTFOUND when unknown.
func (s *Store) TemplateHistory(ctx context.Context, clientID, name string) ([]TemplateVersion, error) {
	t, err := s.templateByName(ctx, clientID, name, true)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT `+versionColumns+` FROM template_versions v
		JOIN templates t ON t.id = v.template_id WHERE v.template_id = $1 ORDER BY v.version`, t.ID)
	if err != nil {
		return nil, translate(err, "template history")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TemplateVersion, error) { return scanVersion(r) })
	return out, translate(err, "template history")
}

// RollbackTemplate stores version to's content and samples as a new version
// (history only grows), with comment and pushedBy. Errors as PushTemplate,
// ENOTFOUND for an unknown template or version.
func (s *Store) RollbackTemplate(ctx context.Context, clientID, name string, to int, comment, pushedBy string) (PushResult, error) {
	var res PushResult
	err := s.WithTx(ctx, func(tx *Store) error {
		v, err := tx.TemplateVersion(ctx, clientID, name, to)
		if err != nil {
			return err
		}
		if comment == "" {
			comment = fmt.Sprintf("rollback to v%d", to)
		}
		res, err = tx.PushTemplate(ctx, TemplatePush{Name: name, ClientID: clientID, Filename: v.Filename,
			Content: v.Content, PartyIDs: v.PartyIDs, Comment: comment, PushedBy: pushedBy, Forced: v.Forced,
			Samples: v.Samples})
		return err
	})
	return res, err
}

// SetTemplateEnabled enables or disables the template name of scope
// clientID; running services stop (or resume) accepting it within moments.
// Returns ENOTFOUND when unknown.
func (s *Store) SetTemplateEnabled(ctx context.Context, clientID, name string, enabled bool) error {
	tag, err := s.db.Exec(ctx, `UPDATE templates SET enabled = $3, updated_at = now()
		WHERE coalesce(client_id, '') = $1 AND name = $2 AND NOT deleted`, clientID, name, enabled)
	return affected(tag, err, clientID, name)
}

// DeleteTemplate hides a template (a client's DELETE): it is no longer
// served or listed, its history stays, and a later push revives it with
// the next version. Returns ENOTFOUND when unknown.
func (s *Store) DeleteTemplate(ctx context.Context, clientID, name string) error {
	tag, err := s.db.Exec(ctx, `UPDATE templates SET deleted = true, updated_at = now()
		WHERE coalesce(client_id, '') = $1 AND name = $2 AND NOT deleted`, clientID, name)
	return affected(tag, err, clientID, name)
}

func affected(tag pgconn.CommandTag, err error, clientID, name string) error {
	if err != nil {
		return translate(err, "update template")
	}
	if tag.RowsAffected() == 0 {
		return templateNotFound(pgx.ErrNoRows, clientID, name)
	}
	return nil
}

// ListenTemplates holds one connection LISTENing on TemplatesChannel and
// calls changed for every notification of the store's own schema, until
// ctx is done (nil) or the connection fails (the error; the caller
// re-listens). ready is called once the LISTEN is in place.
func (s *Store) ListenTemplates(ctx context.Context, ready func(), changed func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return translate(err, "listen templates")
	}
	// A connection that LISTENed must not go back to the pool.
	pc := conn.Hijack()
	defer pc.Close(context.WithoutCancel(ctx))
	var schema string
	if err := pc.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return translate(err, "listen templates")
	}
	if _, err := pc.Exec(ctx, `LISTEN `+TemplatesChannel); err != nil {
		return translate(err, "listen templates")
	}
	ready()
	for {
		n, err := pc.WaitForNotification(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return translate(err, "wait for template notification")
		}
		if n.Payload == schema {
			changed()
		}
	}
}

// AttemptTemplate is the template version one processing attempt of a
// document is pinned to. TemplateID 0 is a built-in template (the generic
// reader): no stored version, Version 0 and an empty SHA256.
type AttemptTemplate struct {
	Attempt    int
	TemplateID int64 // 0 = built in
	Name       string
	ClientID   string // scope of the template ("" = global)
	Version    int
	SHA256     []byte
	StartedAt  time.Time
	// IgnoredFeedback is the pinned version's docintake.ignored_feedback:
	// the client wants a webhook for an ignored document.
	IgnoredFeedback bool
}

// CurrentAttempt returns the number of the document's current processing
// attempt (1 for the upload, +1 per reprocess). ENOTFOUND for an unknown
// document.
func (s *Store) CurrentAttempt(ctx context.Context, documentID string) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT attempt FROM documents WHERE id = $1`, documentID).Scan(&n)
	if err != nil {
		return 0, notFound(err, "document %s not found", documentID)
	}
	return n, nil
}

// PinAttempt pins the document's attempt to the template version want,
// unless the attempt is pinned already: then it returns that earlier pin
// (pinned false). Either way it counts one start of the attempt
// (AttemptStarts). A new pin appends an event (actor) naming the template,
// version and SHA-256, and marks the template used, in one statement.
// Concurrent callers agree on one pin (the primary key decides).
func (s *Store) PinAttempt(ctx context.Context, documentID string, want AttemptTemplate, state document.State, actor string) (AttemptTemplate, bool, error) {
	var got AttemptTemplate
	var pinned bool
	var templateID *int64 // NULL for a built-in template: it has no templates row
	if want.TemplateID != 0 {
		templateID = &want.TemplateID
	}
	sum := want.SHA256
	if sum == nil {
		sum = []byte{} // the column is NOT NULL; a built-in template has no content to hash
	}
	err := s.db.QueryRow(ctx, pinAttemptSQL, documentID, want.Attempt, templateID, want.Name, nullable(want.ClientID),
		want.Version, sum, state, actor, want.String(), want.IgnoredFeedback).Scan(&got.Attempt, &got.TemplateID, &got.Name,
		&got.ClientID, &got.Version, &got.SHA256, &got.StartedAt, &got.IgnoredFeedback, &pinned)
	if err != nil {
		return AttemptTemplate{}, false, translate(err, "pin attempt")
	}
	return got, pinned, nil
}

// pinAttemptSQL is PinAttempt's single statement. On conflict the earlier
// pin stays and only its start count moves; xmax = 0 tells the row this
// statement inserted from the one it updated.
const pinAttemptSQL = `WITH pin AS (
		INSERT INTO document_attempts AS a (document_id, attempt, template_id, template, template_client,
			template_version, template_sha256, ignored_feedback) VALUES ($1, $2, $3, $4, $5, $6, $7, $11)
		ON CONFLICT (document_id, attempt) DO UPDATE SET starts = a.starts + 1
		RETURNING *, (xmax = 0) AS inserted),
	used AS (UPDATE templates SET last_used_at = now() WHERE id = $3 AND EXISTS (SELECT 1 FROM pin WHERE inserted)),
	ev AS (INSERT INTO document_events (document_id, from_state, to_state, actor, detail)
		SELECT document_id, $8, $8, $9, $10 FROM pin WHERE inserted)
	SELECT ` + attemptColumns + `, inserted FROM pin`

// AttemptStarts returns how many times a worker started attempt n of the
// document (0 when it never was).
func (s *Store) AttemptStarts(ctx context.Context, documentID string, n int) (int, error) {
	var starts int
	err := s.db.QueryRow(ctx, `SELECT starts FROM document_attempts WHERE document_id = $1 AND attempt = $2`,
		documentID, n).Scan(&starts)
	if err == pgx.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, translate(err, "attempt starts")
	}
	return starts, nil
}

// String is the audit line of a pin: "attempt 2: template NAME v3 sha256 HEX
// (client ID|global)".
func (a AttemptTemplate) String() string {
	if a.TemplateID == 0 {
		return fmt.Sprintf("attempt %d: built-in template %s", a.Attempt, a.Name)
	}
	scope := "global"
	if a.ClientID != "" {
		scope = "client " + a.ClientID
	}
	return fmt.Sprintf("attempt %d: template %s v%d sha256 %x (%s)", a.Attempt, a.Name, a.Version, a.SHA256, scope)
}

const attemptColumns = `attempt, coalesce(template_id, 0), template, coalesce(template_client, ''), template_version,
	template_sha256, started_at, ignored_feedback`

func scanAttempt(row pgx.Row) (AttemptTemplate, error) {
	var a AttemptTemplate
	err := row.Scan(&a.Attempt, &a.TemplateID, &a.Name, &a.ClientID, &a.Version, &a.SHA256, &a.StartedAt, &a.IgnoredFeedback)
	return a, err
}

// Attempt returns attempt n of a document. ENOTFOUND when it was not
// pinned yet.
func (s *Store) Attempt(ctx context.Context, documentID string, n int) (AttemptTemplate, error) {
	a, err := scanAttempt(s.db.QueryRow(ctx, `SELECT `+attemptColumns+` FROM document_attempts
		WHERE document_id = $1 AND attempt = $2`, documentID, n))
	return a, translate(err, "get attempt")
}

// CurrentPin returns the template pin of the document's current attempt.
// ENOTFOUND when that attempt was never started.
func (s *Store) CurrentPin(ctx context.Context, documentID string) (AttemptTemplate, error) {
	a, err := scanAttempt(s.db.QueryRow(ctx, `SELECT `+attemptColumns+` FROM document_attempts
		WHERE document_id = $1 AND attempt = (SELECT attempt FROM documents WHERE id = $1)`, documentID))
	return a, translate(err, "get current pin")
}

// IgnoredFeedback reports whether the template version the document's
// current attempt is pinned to asks for a webhook on ignored documents
// (false when the attempt was never started: no template ran, so nothing
// was ignored by one). A push after processing does not change the answer.
func (s *Store) IgnoredFeedback(ctx context.Context, documentID string) (bool, error) {
	pin, err := s.CurrentPin(ctx, documentID)
	if document.ErrorKind(err) == document.ENOTFOUND {
		return false, nil
	}
	return pin.IgnoredFeedback, err
}

// Attempts returns the document's processing attempts with their template
// versions, oldest first.
func (s *Store) Attempts(ctx context.Context, documentID string) ([]AttemptTemplate, error) {
	rows, err := s.db.Query(ctx, `SELECT `+attemptColumns+` FROM document_attempts WHERE document_id = $1
		ORDER BY attempt`, documentID)
	if err != nil {
		return nil, translate(err, "list attempts")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AttemptTemplate, error) { return scanAttempt(r) })
	return out, translate(err, "list attempts")
}

// Reprocess moves a finished or dlq document (c.From) back to received as a
// new processing attempt: like Requeue (a new process job from job, the
// processor's counters reset) and, in the same transaction, the attempt
// number goes up, so the processor pins the template version current then.
// Earlier attempts, events and deliveries stay. Errors as Transition.
func (s *Store) Reprocess(ctx context.Context, c Change, job func(d document.Document, seq int) OutboxRow) (document.Document, error) {
	var out document.Document
	err := s.WithTx(ctx, func(tx *Store) error {
		var err error
		if out, err = tx.Requeue(ctx, c, job); err != nil {
			return err
		}
		_, err = tx.db.Exec(ctx, `UPDATE documents SET attempt = attempt + 1 WHERE id = $1`, c.DocumentID)
		return translate(err, "reprocess")
	})
	return out, err
}

// ReprocessFilter selects documents for a bulk reprocess.
type ReprocessFilter struct {
	ClientID string // required
	Template string // "" = any
	States   []document.State
	Since    time.Time // updated at or after; zero = any
}

// FindForReprocess lists up to limit documents of f, oldest first.
func (s *Store) FindForReprocess(ctx context.Context, f ReprocessFilter, limit int) ([]document.Document, error) {
	if f.ClientID == "" {
		return nil, document.Errorf(document.EINVALID, "a client is required")
	}
	states := stateStrings(f.States)
	var since any
	if !f.Since.IsZero() {
		since = f.Since
	}
	return s.queryDocuments(ctx, "find documents to reprocess", `SELECT `+documentColumns+` FROM documents
		WHERE client_id = $1 AND ($2 = '' OR template = $2) AND state = ANY($3)
			AND ($4::timestamptz IS NULL OR updated_at >= $4)
		ORDER BY created_at, id LIMIT $5`, f.ClientID, f.Template, states, since, limit)
}

// TemplateUsage counts the documents whose latest attempt started since a
// time with one template version, by the document's state now.
type TemplateUsage struct {
	TemplateID int64
	Version    int
	State      document.State
	Count      int
}

// TemplateUsageSince returns the usage rows of attempts started at or after
// since (the ops console's last 24 hours).
func (s *Store) TemplateUsageSince(ctx context.Context, since time.Time) ([]TemplateUsage, error) {
	return s.TemplateUsageOf(ctx, nil, since)
}
