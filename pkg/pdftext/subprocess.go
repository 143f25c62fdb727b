package pdftext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sandbox runs the poppler and tesseract programs with a deadline and
// resource limits, each in a jail (sandbox_linux.go): the trampoline sets
// the rlimits on itself before it execs the program, so they apply to
// exactly that process (and its children) from its first instruction.
type sandbox struct {
	memory   int64 // RLIMIT_AS in bytes
	cpu      time.Duration
	maxOut   int64
	maxStder int64
}

func newSandbox(opts Options) sandbox {
	mem := opts.MemoryLimitBytes
	if mem <= 0 {
		mem = DefaultSubprocessMemory
	}
	return sandbox{memory: mem, cpu: opts.Timeout, maxOut: opts.MaxOutputBytes, maxStder: 4 << 10}
}

// limits are a one-shot program's rlimits: address space, CPU time (the
// deadline rounded up, SIGKILL a second after SIGXCPU), no core dumps and
// a few hundred descriptors (a PDF tool opens its input, fonts and
// tesseract's models).
func (s sandbox) limits() []rlimit {
	cpu := uint64(s.cpu/time.Second) + 1
	return []rlimit{
		{"as", unix.RLIMIT_AS, uint64(s.memory), uint64(s.memory)},
		{"cpu", unix.RLIMIT_CPU, cpu, cpu + 1},
		{"core", unix.RLIMIT_CORE, 0, 0},
		{"nofile", unix.RLIMIT_NOFILE, 256, 256},
	}
}

// privateDir creates a directory only the programs' user can read (0700
// from MkdirTemp, handed to that user when it is not us) and writes the PDF
// into it as 0600, so the programs read a file no other user can swap or
// read.
func privateDir(pdf []byte) (dir, file string, err error) {
	dir, err = helperTempDir()
	if err != nil {
		return "", "", err
	}
	file = filepath.Join(dir, "input.pdf")
	if err := os.WriteFile(file, pdf, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("write temp pdf: %w", err)
	}
	if err := chownToHelper(file, dir); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("hand temp pdf to the helper: %w", err)
	}
	return dir, file, nil
}

// helperTempDir creates a private (0700) working directory for the
// programs, owned by their user.
func helperTempDir() (string, error) {
	dir, err := os.MkdirTemp("", "pdftext-*")
	if err != nil {
		return "", fmt.Errorf("create temp dir: %w", err)
	}
	if err := chownToHelper(dir, dir); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("hand temp dir to the helper: %w", err)
	}
	return dir, nil
}

// helperDir creates a directory inside a private one for the programs to
// write into, owned by the user of the programs working in that private
// directory.
func helperDir(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil {
		return err
	}
	return chownToHelper(path, filepath.Dir(path))
}

// withInput runs fn under the per-document deadline with pdf written to a
// private directory, removed afterwards.
func withInput(ctx context.Context, timeout time.Duration, pdf []byte, fn func(ctx context.Context, dir, file string) (*Text, error)) (*Text, error) {
	ctx, cancel := withDeadline(ctx, timeout)
	defer cancel()
	dir, file, err := privateDir(pdf)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	return fn(ctx, dir, file)
}

// errOutputTooLarge is wrapped with ErrUnreadable: a document whose text
// exceeds the cap is treated as hostile.
var errOutputTooLarge = errors.New("output exceeds limit")

// run executes bin with args in dir, feeding stdin, and returns stdout. It
// kills the whole process group when ctx ends or stdout exceeds maxOut.
// Errors: ctx expiry → ErrTimeout (via ctxErr); non-zero exit, a kill by a
// resource limit or too much output → ErrUnreadable.
func (s sandbox) run(ctx context.Context, dir, bin string, args []string, stdin []byte) ([]byte, error) {
	out, _, err := s.runStderr(ctx, dir, bin, args, stdin)
	return out, err
}

// runStderr is run that also returns the first bytes the program wrote on
// stderr when it succeeded: poppler reports there what it repaired in a
// broken document it still read.
func (s sandbox) runStderr(ctx context.Context, dir, bin string, args []string, stdin []byte) ([]byte, []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, ctxErr(ctx)
	}
	// A fixed environment: no inherited secrets, C.UTF-8 so poppler writes
	// UTF-8, one OpenMP thread so tesseract stays inside its CPU share and
	// address-space limit.
	env := []string{"LC_ALL=C.UTF-8", "OMP_THREAD_LIMIT=1", "HOME=" + dir, "TMPDIR=" + dir}
	if v := os.Getenv("TESSDATA_PREFIX"); v != "" {
		env = append(env, "TESSDATA_PREFIX="+v)
	}
	stdout, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Base(bin), err)
	}
	defer stdout.Close()
	if helperCred(dir) != nil {
		// The helper runs as another user, and `pdfdetach -o /dev/stdout`
		// reopens the pipe by path, which checks the pipe's owner and mode:
		// let the helper write to it (it is ours alone either way).
		_ = pw.Chmod(0o622)
	}
	var stderr bytes.Buffer
	cmd, err := startJailed(func(namespaces bool) *exec.Cmd {
		j := jail{dir: dir, limits: s.limits(), namespaces: namespaces, env: env}
		cmd := j.command(ctx, bin, args)
		cmd.Cancel = func() error { return killGroup(cmd) }
		// Wait would block on pipes kept open by a grandchild; give up after 1 s.
		cmd.WaitDelay = time.Second
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		stderr.Reset()
		cmd.Stderr = &capWriter{w: &stderr, n: s.maxStder}
		cmd.Stdout = pw
		return cmd
	})
	_ = pw.Close() // the child holds its copy; EOF comes when it exits
	if err != nil {
		// exec.CommandContext refuses to start once ctx is done: a deadline
		// that expired before the process began is still our timeout.
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("start %s: %w", filepath.Base(bin), ctxErr(ctx))
		}
		return nil, nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, s.maxOut+1))
	tooLarge := int64(len(out)) > s.maxOut
	if tooLarge {
		_ = killGroup(cmd)
	}
	// Drain whatever is left so the child is not blocked on a full pipe
	// before it sees the kill.
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, nil, ctxErr(ctx)
	case tooLarge:
		return nil, nil, fmt.Errorf("%s: %w: %w (%d bytes)", filepath.Base(bin), ErrUnreadable, errOutputTooLarge, s.maxOut)
	case waitErr != nil:
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[len(msg)-300:]
		}
		return nil, nil, fmt.Errorf("%s: %w: %v: %s", filepath.Base(bin), ErrUnreadable, waitErr, msg)
	case readErr != nil:
		return nil, nil, fmt.Errorf("read %s output: %w", filepath.Base(bin), readErr)
	}
	return out, stderr.Bytes(), nil
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	// Negative pid: the whole group, so children of the program die too.
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// capWriter keeps the first n bytes and discards the rest without failing
// the writer (a failing stderr writer would kill the copy goroutine early).
type capWriter struct {
	w io.Writer
	n int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.n > 0 {
		k := min(int64(len(p)), c.n)
		_, _ = c.w.Write(p[:k])
		c.n -= k
	}
	return len(p), nil
}
