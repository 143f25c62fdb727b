// Package queuetest gives tests a real JetStream server and isolated
// streams.
//
//   - Server starts an embedded nats-server (JetStream, temp store dir,
//     random loopback port) that lives as long as the test.
//   - StartProcess runs nats-server as a separate process that a test can
//     kill and restart (broker crash tests). The binary is $INTAKE_NATS_SERVER
//     or is built once from the nats-server/v2 module version in go.mod and
//     cached in $HOME/.cache/docintake-bin (falling back to nats-server on
//     $PATH when the build fails).
//   - JetStream connects to INTAKE_TEST_NATS_URL when set, else to a fresh
//     embedded Server.
//   - Config / Ensure give each test its own stream name and subject prefix,
//     so tests sharing a server never see each other's messages.
package queuetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/docintake/docintake/pkg/queue"
)

// Server starts an embedded JetStream server for the test and shuts it down
// at cleanup. Its store is synced on every write, like production.
func Server(t testing.TB) *server.Server {
	t.Helper()
	opts := &server.Options{
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   t.TempDir(),
		SyncAlways: true,
		NoLog:      true,
		NoSigs:     true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("queuetest: new server: %v", err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("queuetest: embedded nats-server not ready within 10s")
	}
	return s
}

// Connect opens a connection (closed at cleanup) and its JetStream context.
// Reconnects are fast and unlimited so broker-restart tests recover quickly.
func Connect(t testing.TB, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	opts = append([]nats.Option{
		nats.Name(t.Name()),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50 * time.Millisecond),
	}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("queuetest: connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("queuetest: jetstream: %v", err)
	}
	return nc, js
}

// JetStream returns a JetStream context on INTAKE_TEST_NATS_URL, or on a new
// embedded Server when that is unset.
func JetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	url := os.Getenv("INTAKE_TEST_NATS_URL")
	if url == "" {
		url = Server(t).ClientURL()
	}
	_, js := Connect(t, url)
	return js
}

// Config returns the default queue configuration with a stream name and
// subject prefix unique to this test.
func Config(t testing.TB) queue.Config {
	t.Helper()
	suffix := randomHex()
	return queue.Config{
		Stream:        "T_" + sanitize(t.Name()) + "_" + strings.ToUpper(suffix),
		SubjectPrefix: "t" + suffix,
	}.WithDefaults()
}

// Ensure applies cfg (Config(t) when cfg is nil) with queue.Ensure and
// deletes the stream at cleanup. Returns the applied configuration.
func Ensure(t testing.TB, js jetstream.JetStream, cfg *queue.Config) queue.Config {
	t.Helper()
	c := Config(t)
	if cfg != nil {
		c = cfg.WithDefaults()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := queue.Ensure(ctx, js, c); err != nil {
		t.Fatalf("queuetest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// The connection may already be closed (or the server gone) when the
		// test tore it down itself; the stream then dies with the server.
		_ = js.DeleteStream(ctx, c.Stream)
	})
	return c
}

// sanitize keeps letters and digits of a test name (stream names must not
// contain '.', '*', '>' or whitespace), at most 32 of them.
func sanitize(name string) string {
	var b strings.Builder
	for _, c := range name {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
		if b.Len() == 32 {
			break
		}
	}
	return b.String()
}

func randomHex() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
