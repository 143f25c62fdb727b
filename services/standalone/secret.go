package standalone

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// secret returns the secret kept in path, creating it (32 random bytes as
// hex, mode 0600) on the first start. Standalone's private PostgreSQL and
// embedded NATS listen on the host's loopback, where every local user can
// reach them: the secret keeps them out. A file whose mode lets others read
// it is refused rather than trusted.
func secret(path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		st, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("secret %s: %w", path, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("secret %s: mode %v lets others read it; chmod 600 it", path, st.Mode().Perm())
		}
		s := strings.TrimSpace(string(b))
		if s == "" || strings.Trim(s, "0123456789abcdef") != "" {
			return "", fmt.Errorf("secret %s: not a hex string; delete it to generate a new one", path)
		}
		return s, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("secret %s: %w", path, err)
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	s := hex.EncodeToString(raw[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create secret %s: %w", path, err)
	}
	if _, err := f.WriteString(s + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("write secret %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write secret %s: %w", path, err)
	}
	return s, nil
}
