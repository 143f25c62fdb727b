package store_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"
)

// objectKeysVersion is the migration that added the key columns.
const objectKeysVersion = 14

// legacyDoc is a documents row as written before the key columns existed.
type legacyDoc struct {
	logID, state                   string
	source, result, resultJSON     string // URIs; "" = NULL
	wantSource, wantRes, wantResJS string // keys the backfill must find
}

// migrationAt returns a pool on a fresh schema migrated up to version and a
// provider to move it on.
func migrationAt(t *testing.T, version int64) (*pgxpool.Pool, *goose.Provider) {
	t.Helper()
	pool := storetest.Pool(t)
	p, db, err := store.MigrationProvider(pool)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = p.DownTo(t.Context(), version)
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), `INSERT INTO clients (id) VALUES ('acme')`)
	require.NoError(t, err)
	return pool, p
}

func insertLegacy(ctx context.Context, t *testing.T, pool *pgxpool.Pool, d legacyDoc) {
	t.Helper()
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	sum := sha256.Sum256([]byte(d.logID))
	_, err := pool.Exec(ctx, `INSERT INTO documents (id, log_id, client_id, message_id, file_sha256, file_size,
			filename, subject, template, source_path, result_path, result_json_path, state)
		VALUES ($1, $2, 'acme', $2, $3, 1, 'a.pdf', 'PO', 'contoso-po', $4, $5, $6, $7)`,
		uuid.NewString(), d.logID, sum[:], null(d.source), null(d.result), null(d.resultJSON), d.state)
	require.NoError(t, err)
}

// Rows written before migration 00014 get the key of every object they
// name, for each URI form docintake has written: the S3 store's
// s3://bucket/key and the filesystem store's file:// URI, also under a root
// that contains "sources" and characters the URI escapes. The URIs are made
// by the stores themselves, so a change to how they name objects shows here.
// Going down and up again gives the same keys.
func TestMigrationBackfillsObjectKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, p := migrationAt(t, objectKeysVersion-1)

	s3, err := objectstore.NewS3(objectstore.S3Config{Bucket: "intake-docs", Endpoint: "http://127.0.0.1:1"})
	require.NoError(t, err)
	root := filepath.Join(t.TempDir(), "my data", "sources", "results#1")
	require.NoError(t, os.MkdirAll(root, 0o755))
	fs, err := objectstore.NewFS(root)
	require.NoError(t, err)
	require.Contains(t, fs.URI("x"), "my%20data", "the root is escaped in the URI")

	var docs []legacyDoc
	for _, st := range []objectstore.Store{s3, fs} {
		id := func() string { return uuid.NewString() }
		// received: only the source.
		a := id()
		src := objectstore.SourceKey(a, fixedDay)
		docs = append(docs, legacyDoc{logID: a, state: "received", source: st.URI(src), wantSource: src})
		// finished_success: source and both results.
		b := id()
		src, xml, js := objectstore.SourceKey(b, fixedDay), objectstore.ResultKey(b, fixedDay, "xml"), objectstore.ResultKey(b, fixedDay, "json")
		docs = append(docs, legacyDoc{logID: b, state: "finished_success", source: st.URI(src), result: st.URI(xml),
			resultJSON: st.URI(js), wantSource: src, wantRes: xml, wantResJS: js})
		// reprocessed after a success: received again, the old results kept.
		c := id()
		src, xml, js = objectstore.SourceKey(c, fixedDay), objectstore.ResultKey(c, fixedDay, "xml"), objectstore.ResultKey(c, fixedDay, "json")
		docs = append(docs, legacyDoc{logID: c, state: "received", source: st.URI(src), result: st.URI(xml),
			resultJSON: st.URI(js), wantSource: src, wantRes: xml, wantResJS: js})
		// dlq: never processed into results.
		d := id()
		src = objectstore.SourceKey(d, fixedDay)
		docs = append(docs, legacyDoc{logID: d, state: "dlq", source: st.URI(src), wantSource: src})
	}
	for _, d := range docs {
		insertLegacy(ctx, t, pool, d)
	}

	check := func() {
		t.Helper()
		for _, d := range docs {
			var src, res, resJS, srcPath string
			require.NoError(t, pool.QueryRow(ctx, `SELECT source_key, coalesce(result_key, ''), coalesce(result_json_key, ''),
				source_path FROM documents WHERE log_id = $1`, d.logID).Scan(&src, &res, &resJS, &srcPath))
			require.Equal(t, d.wantSource, src, d.source)
			require.Equal(t, d.wantRes, res, d.result)
			require.Equal(t, d.wantResJS, resJS, d.resultJSON)
			require.Equal(t, d.source, srcPath, "the URI stays as it was")
		}
	}
	_, err = p.UpTo(ctx, objectKeysVersion)
	require.NoError(t, err)
	check()
	_, err = p.DownTo(ctx, objectKeysVersion-1)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, objectKeysVersion)
	require.NoError(t, err)
	check()

	// The store reads the backfilled keys like written ones.
	got, err := store.New(pool).DocumentByLogIDAnyClient(ctx, docs[1].logID)
	require.NoError(t, err)
	require.Equal(t, docs[1].wantSource, got.SourceKey)
	require.Equal(t, docs[1].wantRes, got.ResultKey)
	require.Equal(t, docs[1].wantResJS, got.ResultJSONKey)
}

// A URI that names no key stops the migration (nothing is half-written: the
// schema stays at the version before) instead of storing a wrong key.
func TestMigrationRefusesUnknownObjectURI(t *testing.T) {
	t.Parallel()
	for name, uri := range map[string]string{
		"other scheme":           "mem://sources/2025/01/02/x.pdf",
		"bucket without key":     "s3://intake/",
		"file not a key's shape": "file:///srv/objects/x.pdf",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			pool, p := migrationAt(t, objectKeysVersion-1)
			logID := uuid.NewString()
			insertLegacy(ctx, t, pool, legacyDoc{logID: logID, state: "received", source: uri})
			_, err := p.UpTo(ctx, objectKeysVersion)
			require.ErrorContains(t, err, logID)
			v, err := p.GetDBVersion(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(objectKeysVersion-1), v)
		})
	}
}

// Keys round-trip through the store: the source key from the creating
// INSERT, the result keys from the processed transition; the schema refuses
// a document without a source key, a source object claimed twice, a result
// URI without its key and a success without results.
func TestDocumentObjectKeys(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	d, job := newDoc("acme", "m-keys", "pdf")
	created, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	require.Equal(t, d.SourceKey, created.SourceKey)
	require.Equal(t, d.SourcePath, created.SourcePath)
	require.Empty(t, created.ResultKey)

	noKey, job2 := newDoc("acme", "m-nokey", "pdf 2")
	noKey.SourceKey = ""
	_, _, err = s.CreateDocument(ctx, noKey, job2)
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
	twice, job3 := newDoc("acme", "m-twice", "pdf 3")
	twice.SourceKey = d.SourceKey
	_, _, err = s.CreateDocument(ctx, twice, job3)
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err), "a source object belongs to one document")

	bare := store.Change{DocumentID: d.ID, From: document.StateReceived, To: document.StateProcessedSuccess, Actor: "t"}
	_, err = s.Transition(ctx, bare)
	require.Equal(t, document.EINVALID, document.ErrorKind(err), "a success without results")
	uriOnly := succeeded(bare, d.LogID)
	uriOnly.ResultKey = nil
	_, err = s.Transition(ctx, uriOnly)
	require.Equal(t, document.EINVALID, document.ErrorKind(err), "a result URI without its key")

	ok := succeeded(bare, d.LogID)
	moved, err := s.Transition(ctx, ok)
	require.NoError(t, err)
	read, err := s.DocumentByLogIDAnyClient(ctx, d.LogID)
	require.NoError(t, err)
	for _, got := range []document.Document{moved, read} {
		require.Equal(t, d.SourceKey, got.SourceKey)
		require.Equal(t, *ok.ResultKey, got.ResultKey)
		require.Equal(t, *ok.ResultPath, got.ResultPath)
		require.Equal(t, *ok.ResultJSONKey, got.ResultJSONKey)
		require.Equal(t, *ok.ResultJSONPath, got.ResultJSONPath)
	}
	// A later transition without results keeps them.
	sent, err := s.Transition(ctx, store.Change{DocumentID: d.ID, From: document.StateProcessedSuccess, To: document.StateSentSuccess, Actor: "t"})
	require.NoError(t, err)
	require.Equal(t, *ok.ResultKey, sent.ResultKey)

	known, err := s.KnownSourceKeys(ctx, []string{d.SourceKey, noKey.SourceKey, objectstore.SourceKey(d.LogID, fixedDay.AddDate(0, 0, 1))})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{d.SourceKey: true}, known, "only the document's own key, not its log id under another day")
}
