package pdftext

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// As root, the helper programs run as a uid of their own: a PDF that exploits poppler
// or tesseract gets no privileges. They can still read their input and
// write into the private directory, and nobody else can read either.
func TestHelpersDropRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs as root only (CI does): a non-root process has nothing to drop")
	}
	sb := newSandbox(Options{Timeout: 10 * time.Second, MaxOutputBytes: 1 << 20})
	dir, file, err := privateDir([]byte("%PDF-1.4 test"))
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	cred := helperCred(dir)
	require.NotNil(t, cred)
	require.NotZero(t, cred.Uid)

	out, err := sb.run(t.Context(), dir, "/usr/bin/id", []string{"-u"}, nil)
	require.NoError(t, err)
	require.Equal(t, strconv.FormatUint(uint64(cred.Uid), 10), strings.TrimSpace(string(out)))
	out, err = sb.run(t.Context(), dir, "/bin/cat", []string{file}, nil)
	require.NoError(t, err, "the helper reads its input")
	require.Equal(t, "%PDF-1.4 test", string(out))
	require.NoError(t, helperDir(dir+"/pages"))
	_, err = sb.run(t.Context(), dir, "/usr/bin/touch", []string{dir + "/pages/p-1.png"}, nil)
	require.NoError(t, err, "the helper writes its pages")
	_, err = sb.run(t.Context(), dir, "/bin/cat", []string{"/etc/shadow"}, nil)
	require.ErrorIs(t, err, ErrUnreadable, "a helper cannot read what only root can")
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

// workDir is a private working directory the helper programs may use (as
// root they run as a uid of their own, which cannot enter t.TempDir()).
func workDir(t *testing.T) string {
	t.Helper()
	dir, err := helperTempDir()
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
