package systemtest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/docintake/docintake/services/intakectl"
	"github.com/docintake/docintake/services/standalone/standalonetest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// Uploading a directory twice creates each document once; the second run
// reports the existing log_ids; --wait reports every outcome.
func TestUploadDirectoryTwice(t *testing.T) {
	t.Parallel()
	// Results go to a listener so that documents finish; not needed for
	// the outcomes, which upload reads from the API.
	sys := startSystem(t, freeAddr(t), "unused", "whsec_dW51c2Vk")
	dir := fixture(t, map[string][]byte{
		"2024/po-1.pdf":         genOrderPDF(1),
		"2024/q3/po-2.PDF":      genOrderPDF(2),
		"2025/copy-of-po-1.pdf": genOrderPDF(1),                                     // same bytes: one document
		"2025/letter.pdf":       pdftexttest.PDF([]string{"Dear supplier, thanks"}), // not an order: rejected
		"2025/notes.txt":        []byte("not a PDF, not uploaded"),
	})
	env := map[string]string{"DOCINTAKE_URL": sys.URL, "DOCINTAKE_TOKEN": standalonetest.DevToken}

	r := runEnv(t, env, "upload", "--template", "gen-order", "--wait", dir)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "4 files, 3 documents: 3 uploaded, 0 already there, 0 refused")
	require.Regexp(t, `(?m)^success +2$`, r.stdout)
	require.Regexp(t, `(?m)^rejected +1$`, r.stdout)
	// The letter lacks the template's keywords (DESIGN.md: unknown_format),
	// read from the document details' status_reason.
	require.Regexp(t, `(?m)^rejected unknown_format +1$`, r.stdout)
	require.Regexp(t, `(?m)^failed +0$`, r.stdout)
	first := logIDs(r.stdout, "uploaded")
	require.Len(t, first, 3)
	require.Equal(t, 3, countDocuments(t, sys.DatabaseURL))

	// The second run uploads nothing and names the same log_ids.
	r = runEnv(t, env, "upload", "--template", "gen-order", dir)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "4 files, 3 documents: 0 uploaded, 3 already there, 0 refused")
	require.ElementsMatch(t, first, logIDs(r.stdout, "exists"))
	require.Equal(t, 3, countDocuments(t, sys.DatabaseURL))
}

// A file the API refuses (not a PDF) makes the exit code 1 and is listed
// with the API's code; the others are still uploaded.
func TestUploadRefusedFile(t *testing.T) {
	t.Parallel()
	sys := startSystem(t, freeAddr(t), "unused", "whsec_dW51c2Vk")
	dir := fixture(t, map[string][]byte{"a.pdf": genOrderPDF(7), "fake.pdf": []byte("GIF89a not a pdf")})
	r := runEnv(t, map[string]string{}, "upload", "--url", sys.URL, "--token", standalonetest.DevToken,
		"--party-id", "GEN", "--subject", "archive 2023", dir)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "2 files, 2 documents: 1 uploaded, 0 already there, 1 refused")
	require.Regexp(t, `(?m)^refused +\S*fake\.pdf: docintake: 415 not_a_pdf`, r.stdout)
	require.Regexp(t, `(?m)^-\s+-\s+\S*fake\.pdf\s+not_a_pdf: `, r.stdout)

	// Usage errors.
	require.Equal(t, 2, runEnv(t, nil, "upload", dir).code, "no URL and token")
	require.Equal(t, 2, runEnv(t, nil, "upload", "--url", sys.URL, "--token", "t", "--template", "x", "--party-id", "y", dir).code)
	require.Equal(t, 1, runEnv(t, nil, "upload", "--url", sys.URL, "--token", "t", "--template", "x", filepath.Join(dir, "missing")).code)
	require.Equal(t, 1, runEnv(t, nil, "upload", "--url", sys.URL, "--token", "wrong", "--template", "gen-order", dir).code)
}

// result is what a finished intakectl command left.
type result struct {
	code           int
	stdout, stderr string
}

// runEnv runs intakectl args to the end with the variables of env.
func runEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := intakectl.Main(t.Context(), args, intakectlEnv(env, &out, &errb))
	return result{code, out.String(), errb.String()}
}

// fixture writes files (path: content) into a new directory.
func fixture(t *testing.T, files map[string][]byte) string {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, b := range files {
		fsys[name] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, fsys))
	return dir
}

var logIDRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// logIDs returns the log_ids of the output lines starting with word.
func logIDs(out, word string) []string {
	var ids []string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, word+" ") {
			ids = append(ids, logIDRe.FindString(l))
		}
	}
	return ids
}

func countDocuments(t *testing.T, dbURL string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(context.Background(), "select count(*) from documents").Scan(&n))
	return n
}
