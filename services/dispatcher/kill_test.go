package dispatcher_test

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// dispatcherBinary builds cmd/dispatcher once per test run.
func dispatcherBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dispatcher-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "dispatcher")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/dispatcher")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	require.NoError(t, buildErr, "go build ./cmd/dispatcher: %s", buildOut)
	return binPath
}

// startProcess runs the dispatcher binary with the bundle's environment.
func (b *bundle) startProcess(bin string) (*exec.Cmd, *bytes.Buffer) {
	b.t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range b.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(b.t, cmd.Start())
	b.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if b.t.Failed() {
			b.t.Logf("dispatcher process log:\n%s", logs.String())
		}
	})
	return cmd, &logs
}

// kill -9 the dispatcher after the receiver has the request and its 2xx is on
// the wire, before the state update: the restarted dispatcher delivers it
// again with the same webhook-id (at-least-once) and the document finishes.
func TestKill9BetweenResponseAndStateUpdate(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the dispatcher binary")
	}
	bin := dispatcherBinary(t)
	b := setup(t, map[string]string{"INTAKE_WEBHOOK_TIMEOUT": "3s", "INTAKE_LOG_LEVEL": "debug"})
	rc := newReceiver(t)
	got := make(chan struct{})
	var once sync.Once
	rc.setAnswer(func(w http.ResponseWriter, r *http.Request, _ call) {
		// The status line and a part of the body go out; the dispatcher has
		// its 2xx and waits for the rest of the body, which never comes.
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("accepted"))
		w.(http.Flusher).Flush()
		once.Do(func() { close(got) })
		<-r.Context().Done()
	})
	b.client("acme", rc.URL)
	first, _ := b.startProcess(bin)

	d := b.document("acme", "quiet", document.StateProcessedSuccess, "")
	select {
	case <-got:
	case <-time.After(90 * time.Second): // a bound for a loaded CI machine, not a timing assertion
		t.Fatal("the receiver got no call")
	}
	cur, err := b.st.Document(t.Context(), d.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, cur.State, "killed before the state update")
	require.NoError(t, first.Process.Kill()) // SIGKILL
	_ = first.Wait()

	rc.setAnswer(nil)
	b.startProcess(bin)
	b.waitState(d.LogID, document.StateFinishedSuccess, 60*time.Second)
	calls := callsFor(rc.snapshot(), d.LogID)
	require.Len(t, calls, 2, "delivered again after the crash")
	require.Equal(t, calls[0].Header.Get("webhook-id"), calls[1].Header.Get("webhook-id"), "same webhook-id: the client can dedup")
	require.Equal(t, calls[0].Body, calls[1].Body)
}
