package pdftext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// orderPDF is a two-page order with a label/value layout in two columns.
func orderPDF() []byte {
	return pdftexttest.Build(
		pdftexttest.Page{Texts: []pdftexttest.Text{
			{X: 72, Y: 72, Size: 16, Bold: true, S: "PURCHASE ORDER"},
			{X: 72, Y: 120, S: "Order No:"}, {X: 200, Y: 120, S: "PO-4711"},
			{X: 72, Y: 134, S: "Date:"}, {X: 200, Y: 134, S: "2024-03-01"},
			{X: 72, Y: 180, S: "Pos"}, {X: 120, Y: 180, S: "Description"}, {X: 400, Y: 180, S: "Qty"},
			{X: 72, Y: 194, S: "1"}, {X: 120, Y: 194, S: "Micro-Motor #4 (Größe M)"}, {X: 400, Y: 194, S: "89"},
		}},
		pdftexttest.Page{Texts: []pdftexttest.Text{{X: 72, Y: 72, S: "Delivery: Musterstraße 1, Köln"}}},
	)
}

func textEngines(t *testing.T) map[string]Engine {
	t.Helper()
	engines := map[string]Engine{EnginePdfium: sharedPdfium(t)}
	if _, err := exec.LookPath("pdftotext"); err == nil {
		e, err := New(Options{Engine: EnginePdftotext})
		require.NoError(t, err)
		engines[EnginePdftotext] = e
	}
	if bin := pdftexttest.ResidentBinIfAvailable(t); bin != "" {
		e, err := New(Options{Engine: EngineResident, Workers: 1, ResidentBin: bin})
		require.NoError(t, err)
		t.Cleanup(func() { _ = e.Close() })
		engines[EngineResident] = e
	}
	return engines
}

func TestExtractGeneratedOrder(t *testing.T) {
	t.Parallel()
	for name, eng := range textEngines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := eng.Extract(t.Context(), orderPDF())
			require.NoError(t, err)
			require.Len(t, got.Pages, 2)
			require.Equal(t, []string{name}, got.Engines())
			require.Equal(t, 1, got.Pages[0].Number)
			require.Equal(t, 2, got.Pages[1].Number)
			require.Regexp(t, `(?m)^\s*PURCHASE ORDER$`, got.Pages[0].Text)
			require.Regexp(t, `(?m)^\s*Order No:\s{2,}PO-4711$`, got.Pages[0].Text)
			require.Regexp(t, `(?m)^\s*Date:\s{2,}2024-03-01$`, got.Pages[0].Text)
			require.Regexp(t, `(?m)^\s*1\s+Micro-Motor #4 \(Größe M\)\s{2,}89$`, got.Pages[0].Text)
			require.Contains(t, got.Pages[1].Text, "Delivery: Musterstraße 1, Köln")
			require.Equal(t, got.Pages[0].Text+"\f"+got.Pages[1].Text+"\f", got.String())
		})
	}
}

func TestTextEngines(t *testing.T) {
	t.Parallel()
	txt := &Text{Pages: []Page{{1, "a", EnginePdftotext}, {2, "", EngineOCR}, {3, "b", EnginePdftotext}}}
	require.Equal(t, []string{EnginePdftotext, EngineOCR}, txt.Engines())
	require.Equal(t, "a\f\fb\f", txt.String())
}

func TestNewRejectsUnknownEngine(t *testing.T) {
	t.Parallel()
	_, err := New(Options{Engine: "mupdf"})
	require.ErrorContains(t, err, `unknown engine "mupdf"`)
}

// slowPDF has enough characters that no engine reads it within
// milliseconds: 20 pages of 60 full lines.
func slowPDF() []byte {
	line := strings.Repeat("0123456789 ", 9)
	var pages []pdftexttest.Page
	for p := 0; p < 20; p++ {
		var pg pdftexttest.Page
		for l := 0; l < 60; l++ {
			pg.Texts = append(pg.Texts, pdftexttest.Text{X: 20, Y: 20 + 13*float64(l), S: line})
		}
		pages = append(pages, pg)
	}
	return pdftexttest.Build(pages...)
}

func TestPdfiumTimeoutKillsInstance(t *testing.T) {
	t.Parallel()
	shared := sharedPdfium(t)
	// Same pool, short deadline: the running wasm call is killed.
	eng := &pdfiumEngine{opts: Options{Timeout: 50 * time.Millisecond, MaxOutputBytes: DefaultMaxOutputBytes}, pool: shared.pool}
	_, err := eng.Extract(t.Context(), slowPDF())
	require.ErrorIs(t, err, ErrTimeout)
	require.NotErrorIs(t, err, ErrUnreadable)
	require.Equal(t, 1, eng.killedInstances())

	// The pool replaced the killed instance.
	got, err := shared.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Contains(t, got.String(), "PO-4711")
}

func TestPdftotextTimeout(t *testing.T) {
	t.Parallel()
	requireTool(t, "pdftotext")
	eng, err := New(Options{Engine: EnginePdftotext, Timeout: time.Millisecond})
	require.NoError(t, err)
	_, err = eng.Extract(t.Context(), slowPDF())
	require.ErrorIs(t, err, ErrTimeout)
}

func TestCallerCancellationIsNotTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, eng := range textEngines(t) {
		_, err := eng.Extract(ctx, orderPDF())
		require.ErrorIs(t, err, context.Canceled, name)
		require.NotErrorIs(t, err, ErrTimeout, name)
	}
}

func TestUnreadable(t *testing.T) {
	t.Parallel()
	for name, eng := range textEngines(t) {
		for _, pdf := range [][]byte{nil, []byte("%PDF-1.4\nnot really"), orderPDF()[:200]} {
			_, err := eng.Extract(t.Context(), pdf)
			require.ErrorIs(t, err, ErrUnreadable, name)
		}
	}
}

func TestMaxOutputBytes(t *testing.T) {
	t.Parallel()
	shared := sharedPdfium(t)
	opts := Options{Timeout: 20 * time.Second, MaxOutputBytes: 100}
	engines := map[string]Engine{EnginePdfium: &pdfiumEngine{opts: opts, pool: shared.pool}}
	if p, err := exec.LookPath("pdftotext"); err == nil {
		opts := opts
		engines[EnginePdftotext] = &pdftotextEngine{opts: opts, bin: p, sb: newSandbox(opts)}
	}
	for name, eng := range engines {
		_, err := eng.Extract(t.Context(), orderPDF())
		require.ErrorIs(t, err, ErrUnreadable, name)
		require.ErrorIs(t, err, errOutputTooLarge, name)
	}
}

// fakeEngine returns err and counts its calls.
type fakeEngine struct {
	err   error
	calls int
}

func (f *fakeEngine) Name() string { return "fake" }
func (f *fakeEngine) Close() error { return nil }
func (f *fakeEngine) ExtractRegion(ctx context.Context, pdf []byte, _ Region) (*Text, error) {
	return f.Extract(ctx, pdf)
}
func (f *fakeEngine) Extract(context.Context, []byte) (*Text, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return &Text{Pages: []Page{{Number: 1, Text: "fake", Engine: "fake"}}}, nil
}

func TestAutoFallback(t *testing.T) {
	t.Parallel()
	t.Run("unreadable for pdftotext, tried with pdfium", func(t *testing.T) {
		t.Parallel()
		fb := &fakeEngine{}
		a := &autoEngine{primary: &fakeEngine{err: fmt.Errorf("pdftotext: %w", ErrUnreadable)}, fallback: fb}
		got, err := a.Extract(t.Context(), nil)
		require.NoError(t, err)
		require.Equal(t, "fake", got.Pages[0].Text)
		require.Equal(t, 1, fb.calls)
	})
	t.Run("timeouts are not retried", func(t *testing.T) {
		t.Parallel()
		fb := &fakeEngine{}
		a := &autoEngine{primary: &fakeEngine{err: fmt.Errorf("pdftotext: %w", ErrTimeout)}, fallback: fb}
		_, err := a.Extract(t.Context(), nil)
		require.ErrorIs(t, err, ErrTimeout)
		require.Zero(t, fb.calls)
	})
	t.Run("both fail: the first error is kept", func(t *testing.T) {
		t.Parallel()
		a := &autoEngine{primary: &fakeEngine{err: fmt.Errorf("pdftotext: %w", ErrUnreadable)},
			fallback: &fakeEngine{err: errors.New("pdfium broke")}}
		_, err := a.Extract(t.Context(), nil)
		require.ErrorIs(t, err, ErrUnreadable)
		require.ErrorContains(t, err, "pdfium broke")
	})
	t.Run("auto uses pdftotext when installed and the resident helper is not", func(t *testing.T) {
		t.Parallel()
		requireTool(t, "pdftotext")
		eng, err := New(Options{ResidentBin: filepath.Join(t.TempDir(), ResidentBinary)})
		require.NoError(t, err)
		defer eng.Close()
		got, err := eng.Extract(t.Context(), orderPDF())
		require.NoError(t, err)
		require.Equal(t, []string{EnginePdftotext}, got.Engines())
	})
}

func TestSandboxKillsProcessGroup(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	dir := workDir(t)
	sb := newSandbox(Options{Timeout: time.Minute, MaxOutputBytes: 1 << 20})
	// The deadline passes once the grandchild runs (however long the
	// sandbox takes to start on a busy machine).
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	pidFile := filepath.Join(dir, "child.pid")
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(pidFile); err == nil {
				cancel(ErrTimeout)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	// The shell starts a grandchild and waits for it; only a process-group
	// kill ends the grandchild too. Its pid inside the helper's pid
	// namespace means nothing here: it is found by its unique argument.
	secs := strconv.Itoa(100000 + int(time.Now().UnixNano()%100000))
	_, err = sb.run(ctx, dir, sh, []string{"-c", "sleep " + secs + " & echo $! > child.pid; wait"}, nil)
	require.ErrorIs(t, err, ErrTimeout)
	_, err = os.Stat(pidFile)
	require.NoError(t, err, "the grandchild was started")
	require.Eventually(t, func() bool { return len(processesRunning("sleep\x00"+secs+"\x00")) == 0 }, 10*time.Second, 10*time.Millisecond,
		"grandchild sleep %s survived the timeout", secs)
}

// processesRunning lists the live processes whose command line is cmdline
// (arguments separated by NULs).
func processesRunning(cmdline string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && string(b) == cmdline && processAlive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processAlive reports whether pid exists and is not a zombie (a zombie
// waits for a parent that may never reap it in a container).
func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestSandboxOutputCap(t *testing.T) {
	t.Parallel()
	yes, err := exec.LookPath("yes")
	if err != nil {
		t.Skip("yes not installed")
	}
	sb := newSandbox(Options{Timeout: time.Minute, MaxOutputBytes: 1000})
	_, err = sb.run(t.Context(), workDir(t), yes, nil, nil)
	require.ErrorIs(t, err, ErrUnreadable)
	require.ErrorIs(t, err, errOutputTooLarge)
}

func TestSandboxLimits(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	sb := newSandbox(Options{Timeout: 20 * time.Second, MaxOutputBytes: 1000, MemoryLimitBytes: 512 << 20})
	out, err := sb.run(t.Context(), workDir(t), sh, []string{"-c", "ulimit -v; ulimit -t"}, nil)
	require.NoError(t, err)
	// ulimit -v prints KiB; the CPU limit is the timeout plus one second.
	require.Equal(t, []string{strconv.Itoa(512 << 10), "21"}, strings.Fields(string(out)))
}

func TestPrivateDirPermissions(t *testing.T) {
	t.Parallel()
	dir, file, err := privateDir([]byte("%PDF-"))
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	di, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// With pdftotext installed, auto's pdfium fallback serves only the rare
// document pdftotext cannot read: one instance, not a pool per worker, so a
// single fallback does not leave the process holding Workers × wasm memory.
func TestAutoFallbackIsOneInstance(t *testing.T) {
	t.Parallel()
	requireTool(t, "pdftotext")
	e, err := New(Options{Engine: EngineAuto, Workers: 4, ResidentBin: filepath.Join(t.TempDir(), ResidentBinary)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	fb, err := e.(*autoEngine).acquireFallback()
	require.NoError(t, err)
	e.(*autoEngine).releaseFallback()
	require.Equal(t, 1, fb.(*pdfiumEngine).opts.Workers)
}
