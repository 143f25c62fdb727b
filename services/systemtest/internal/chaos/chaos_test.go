package chaos_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/docintake/docintake/services/standalone"
	"github.com/docintake/docintake/services/systemtest/internal/chaos"
	"github.com/stretchr/testify/require"
)

// TestChaosShort is the short run of `make chaos` that `make test` runs:
// 300 documents, a kill -9 every ~3s, one nats-server and one PostgreSQL
// crash, services logging at debug level (the secret scan sees the most).
// INTAKE_CHAOS_BIN names prebuilt service binaries (make test passes bin/);
// without it they are built first.
func TestChaosShort(t *testing.T) {
	runChaos(t, chaos.Options{
		Documents: 300, Clients: 16, KillEvery: 3 * time.Second, NATSRestarts: 1, PGRestarts: 1,
		Quiesce: 2 * time.Minute, LogLevel: "debug",
	})
}

// TestChaosClusterShort is the short run of `make chaos-cluster`: three
// nats-servers with an R3 stream, the separate services, 100 documents, a
// kill -9 every ~3s, two NATS node crashes (the stream's leader first) and
// one PostgreSQL crash.
func TestChaosClusterShort(t *testing.T) {
	out := runChaos(t, chaos.Options{
		Documents: 100, Clients: 8, KillEvery: 3 * time.Second, NATSRestarts: 2, PGRestarts: 1, NATSCluster: true,
		Quiesce: 3 * time.Minute,
	})
	require.Regexp(t, `nats-leader=[1-9]`, out, "the stream's leader was among the NATS nodes killed")
}

// runChaos runs the harness with opts (binaries from INTAKE_CHAOS_BIN),
// fails the test for every failed check and returns the run's output.
func runChaos(t *testing.T, opts chaos.Options) string {
	t.Helper()
	if testing.Short() {
		t.Skip("chaos: skipped with -short")
	}
	if _, err := standalone.PostgresBinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var out bytes.Buffer
	opts.BinDir, opts.Out = os.Getenv("INTAKE_CHAOS_BIN"), &out
	rep, err := chaos.Run(t.Context(), opts)
	if err != nil {
		t.Fatalf("chaos harness: %v\n%s", err, out.String())
	}
	rep.Print(&out)
	t.Log("\n" + out.String())
	for _, c := range rep.Checks {
		if !c.OK {
			t.Errorf("%s: %s (data and logs kept in %s)", c.Name, c.Detail, rep.WorkDir)
		}
	}
	return out.String()
}
