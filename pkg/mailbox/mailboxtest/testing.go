package mailboxtest

import (
	"archive/zip"
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/stretchr/testify/require"
)

// StartDovecot starts a server for the test, stopped when it ends, with
// extra config (nil for none). Without Dovecot the test skips, except
// under CI=true (deploy/dev/testenv.sh installs dovecot-imapd), where it
// fails.
func StartDovecot(t testing.TB, extra func(dir string) string) *Dovecot {
	t.Helper()
	if !Installed() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dovecot is not installed (deploy/dev/testenv.sh installs dovecot-imapd)")
		}
		t.Skip("dovecot is not installed: apt-get install dovecot-imapd (deploy/dev/testenv.sh does) to run the IMAP tests")
	}
	dir := t.TempDir()
	// The temporary directory's parent is private to the test user; the
	// mail processes (another user under root) must pass through it.
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	d, err := Start(Options{Dir: dir, Extra: extra})
	require.NoError(t, err, "dovecot did not start")
	t.Cleanup(func() { _ = d.Stop() })
	return d
}

// Client logs in as the server's user, closed when the test ends.
func (d *Dovecot) Client(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := d.Login()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Append delivers raw into folder.
func (d *Dovecot) Append(t testing.TB, folder string, raw []byte) {
	t.Helper()
	require.NoError(t, d.Deliver(folder, raw))
}

// Messages is how many mails folder holds (0 for a folder that does not
// exist).
func (d *Dovecot) Messages(t testing.TB, folder string) int {
	t.Helper()
	n, err := d.Count(folder)
	require.NoError(t, err)
	return n
}

// AppendAt delivers raw into folder as arrived at (INTERNALDATE).
func (d *Dovecot) AppendAt(t testing.TB, folder string, raw []byte, at time.Time) {
	t.Helper()
	require.NoError(t, d.DeliverAt(folder, raw, at))
}

// Zip is a .zip archive of files (path in the archive → content), its
// entries in the order of their paths, as a mail attachment or an upload
// carries one.
func Zip(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write(files[name])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}
