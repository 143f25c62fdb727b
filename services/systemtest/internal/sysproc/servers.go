package sysproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	// --keep-alive: versitygw closes every connection after one response
	// by default, so each S3 request of ingest, processor and dispatcher
	// dialled anew (connect, accept and a fresh HTTP/1 connection on both
	// sides: ≈ 10 % of the processor's Go CPU in `make bench -profile`).
	// S3 itself keeps connections alive; so do our clients' transports.
	if p, err = NewProc("versitygw", bin, []string{"--access", access, "--secret", secret, "--port", addr,
		"--keep-alive", "--quiet", "posix", dir}, os.Environ(), logDir); err != nil {
		return nil, "", "", err
	}
	return p, "http://" + addr, addr, nil
}

// NATSNode is one server of a NATS cluster.
type NATSNode struct {
	Proc *Proc
	Name string // server_name, as JetStream reports stream leaders
	Addr string // client address
}

// NewNATSCluster prepares n nats-servers with JetStream clustered over
// routes on loopback (cluster "docintake"), each with its store under
// dir/<name>/js and fsync on every write, as production's three servers
// run. It returns the nodes and the client URL naming all of them.
func NewNATSCluster(repo, dir, logDir string, n int) (nodes []NATSNode, url string, err error) {
	bin, err := NATSServerBinary(repo)
	if err != nil {
		return nil, "", err
	}
	routes := make([]string, n)
	for i := range n {
		addr, err := FreeAddr()
		if err != nil {
			return nil, "", err
		}
		routes[i] = "nats-route://" + addr
		nodes = append(nodes, NATSNode{Name: fmt.Sprintf("nats-%d", i+1)})
	}
	var urls []string
	for i := range nodes {
		if nodes[i].Addr, err = FreeAddr(); err != nil {
			return nil, "", err
		}
		nodeDir := filepath.Join(dir, nodes[i].Name)
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			return nil, "", err
		}
		conf := filepath.Join(nodeDir, "nats.conf")
		body := fmt.Sprintf("server_name: %s\nlisten: %s\njetstream {\n  store_dir: %q\n  sync_interval: always\n}\n"+
			"cluster {\n  name: docintake\n  listen: %s\n  routes: [%s]\n}\n",
			nodes[i].Name, nodes[i].Addr, filepath.Join(nodeDir, "js"), strings.TrimPrefix(routes[i], "nats-route://"),
			strings.Join(routes, ", "))
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, "", err
		}
		if nodes[i].Proc, err = NewProc(nodes[i].Name, bin, []string{"-c", conf}, os.Environ(), logDir); err != nil {
			return nil, "", err
		}
		urls = append(urls, "nats://"+nodes[i].Addr)
	}
	return nodes, strings.Join(urls, ","), nil
}
