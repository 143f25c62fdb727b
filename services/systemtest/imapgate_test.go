package systemtest_test

import (
	"bufio"
	"io"
	"net"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// imapGate is a TCP relay between the mail intake and Dovecot that can
// hold back one of the intake's UID MOVE commands. While it holds one, the
// mail's documents are committed (the intake moves a mail only after) and
// Dovecot has not seen the move: the test kills the intake right there,
// with no hook in the product and no sleep. Everything else passes through
// unchanged, byte for byte.
type imapGate struct {
	ln     net.Listener
	target string
	held   chan heldMove // one at a time: the test arms, takes, releases

	mu    sync.Mutex
	armed int // hold the armed-th UID MOVE from now on; 0: hold none
	conns map[net.Conn]struct{}
	done  chan struct{}
	wg    sync.WaitGroup
}

// heldMove is a UID MOVE the gate holds; closing release drops the command
// and closes both sides of its connection, as the intake's death would.
type heldMove struct {
	uid     uint32
	release chan struct{}
}

// uidMove is go-imap's UID MOVE of one mail (Reader's move).
var uidMove = regexp.MustCompile(`(?i)^\S+ UID MOVE (\d+) `)

// startIMAPGate relays 127.0.0.1:<free> to target until the test ends.
func startIMAPGate(t *testing.T, target string) *imapGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &imapGate{ln: ln, target: target, held: make(chan heldMove, 1), conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	g.wg.Add(1)
	go g.accept()
	t.Cleanup(g.close)
	return g
}

// Port is the port the intake connects to.
func (g *imapGate) Port() int { return g.ln.Addr().(*net.TCPAddr).Port }

// arm makes the gate hold the k-th UID MOVE it sees from now on.
func (g *imapGate) arm(k int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = k
}

// disarm holds nothing more (a phase that ended without its MOVE).
func (g *imapGate) disarm() { g.arm(0) }

// holds tells whether the gate holds this client line, counting the MOVEs.
func (g *imapGate) holds(line []byte) (uint32, bool) {
	m := uidMove.FindSubmatch(line)
	if m == nil {
		return 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed == 0 {
		return 0, false
	}
	if g.armed--; g.armed > 0 {
		return 0, false
	}
	uid, err := strconv.ParseUint(string(m[1]), 10, 32)
	return uint32(uid), err == nil
}

func (g *imapGate) accept() {
	defer g.wg.Done()
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return // closed
		}
		up, err := net.Dial("tcp", g.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !g.track(c, up) {
			return
		}
		g.wg.Add(2)
		go func() { defer g.wg.Done(); _, _ = io.Copy(c, up); _ = c.Close() }()
		go func() { defer g.wg.Done(); g.relay(c, up) }()
	}
}

// track registers the pair, unless the gate is closing.
func (g *imapGate) track(c, up net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.done:
		_, _ = c.Close(), up.Close()
		return false
	default:
	}
	g.conns[c], g.conns[up] = struct{}{}, struct{}{}
	return true
}

// relay copies the client's lines to the server, holding the armed MOVE.
func (g *imapGate) relay(c, up net.Conn) {
	defer func() { _, _ = c.Close(), up.Close() }()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if uid, ok := g.holds(line); ok {
			release := make(chan struct{})
			select {
			case g.held <- heldMove{uid: uid, release: release}:
			case <-g.done:
				return
			}
			select {
			case <-release:
			case <-g.done:
			}
			return // the MOVE never reaches Dovecot
		}
		if len(line) > 0 {
			if _, werr := up.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (g *imapGate) close() {
	g.mu.Lock()
	close(g.done)
	for c := range g.conns {
		_ = c.Close()
	}
	g.mu.Unlock()
	_ = g.ln.Close()
	g.wg.Wait()
}
