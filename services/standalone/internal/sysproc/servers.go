package sysproc

import (
	"fmt"
	"os"
	"path/filepath"
)

// NewNATS prepares a nats-server with JetStream on a free loopback port,
// its store under dir/js, fsync on every write (the durability production
// needs). It returns the process, its client URL and its address.
func NewNATS(repo, dir, logDir string) (p *Proc, url, addr string, err error) {
	bin, err := NATSServerBinary(repo)
	if err != nil {
		return nil, "", "", err
	}
	if addr, err = FreeAddr(); err != nil {
		return nil, "", "", err
	}
	conf := filepath.Join(dir, "nats.conf")
	body := fmt.Sprintf("listen: %s\njetstream {\n  store_dir: %q\n  sync_interval: always\n}\n", addr, filepath.Join(dir, "js"))
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return nil, "", "", err
	}
	if p, err = NewProc("nats-server", bin, []string{"-c", conf}, os.Environ(), logDir); err != nil {
		return nil, "", "", err
	}
	return p, "nats://" + addr, addr, nil
}

// NewVersitygw prepares a versitygw S3 gateway on a free loopback port,
// storing objects as files under dir, with one access key.
func NewVersitygw(dir, logDir, access, secret string) (p *Proc, url, addr string, err error) {
	bin, err := VersitygwBinary()
	if err != nil {
		return nil, "", "", err
	}
	if addr, err = FreeAddr(); err != nil {
		return nil, "", "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", "", err
	}
	if p, err = NewProc("versitygw", bin, []string{"--access", access, "--secret", secret, "--port", addr,
		"--quiet", "posix", dir}, os.Environ(), logDir); err != nil {
		return nil, "", "", err
	}
	return p, "http://" + addr, addr, nil
}
