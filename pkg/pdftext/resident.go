package pdftext

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docintake/docintake/pkg/fairshare"
	"golang.org/x/sys/unix"
)

// ResidentBinary is the file name of the resident engine's helper, built
// from pkg/pdftext/resident by `make build` into bin/.
const ResidentBinary = "pdftext-resident"

// residentHello starts the first frame of a helper that speaks our protocol
// version (see resident/pdftext-resident.cpp).
const residentHello = "docintake-pdftext-resident 1 "

// residentEngine keeps long-lived pdftext-resident helpers (libpoppler-cpp,
// the text code of `pdftotext -layout`) and sends them one document at a
// time over pipes. Compared with one pdftotext process per document it
// saves the exec, dynamic linking and teardown: about half of the CPU per
// document. Each helper is sandboxed once at spawn (see helperPool.spawn);
// a per-document deadline kills and replaces it, and helpers are recycled
// after Options.ResidentRecycleDocs documents or above Options.ResidentMaxRSS.
type residentEngine struct {
	opts Options
	ocr  *ocrRunner
	pool *helperPool
}

// newResident finds the helper and starts one: that proves the binary runs
// here (its shared libraries are installed, the sandbox can be applied)
// and warms the pool. Any failure is ErrUnavailable, so auto moves on.
func newResident(opts Options, ocr *ocrRunner) (*residentEngine, error) {
	bin, err := findResident(opts.ResidentBin)
	if err != nil {
		return nil, fmt.Errorf("resident: %w: %w", ErrUnavailable, err)
	}
	p, err := newHelperPool(bin, opts)
	if err != nil {
		return nil, fmt.Errorf("resident: %w: %w", ErrUnavailable, err)
	}
	return &residentEngine{opts: opts, ocr: ocr, pool: p}, nil
}

// findResident returns explicit when set, else the helper next to the
// running executable, else the one in PATH.
//
// The path returned is absolute: a helper starts in its own private
// directory, where a relative path (e.g. INTAKE_PDF_RESIDENT_BIN=bin/…)
// would name nothing and the engine would silently fall back to pdftotext.
func findResident(explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", err
		}
		return filepath.Abs(explicit)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), ResidentBinary)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath(ResidentBinary)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

func (e *residentEngine) Name() string { return EngineResident }

func (e *residentEngine) Close() error { return e.pool.Close() }

func (e *residentEngine) Extract(ctx context.Context, pdf []byte) (*Text, error) {
	ctx, cancel := withDeadline(ctx, e.opts.Timeout)
	defer cancel()
	// The bomb screen runs on the tenant's helper slot: inflating a
	// stream is this document's cost, measured and shared like the rest.
	t, err := e.pool.extract(ctx, pdf, "B 0 0 0 0 0 0", screen)
	if err != nil {
		return nil, err
	}
	if e.ocr != nil && hasBlankPage(t) {
		dir, file, err := privateDir(pdf)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if err := ocrBlankPages(ctx, e.ocr, dir, file, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// ExtractRegion sends the region's rectangle in points (the pixels scaled
// from its resolution to 72 dpi, at which poppler's page text works).
func (e *residentEngine) ExtractRegion(ctx context.Context, pdf []byte, r Region) (*Text, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := withDeadline(ctx, e.opts.Timeout)
	defer cancel()
	x, y, w, h := 0.0, 0.0, 0.0, 0.0
	if r.cropped() {
		x, y, w, h = r.points()
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	header := fmt.Sprintf("B %d %d %s %s %s %s", r.FirstPage, r.LastPage, f(x), f(y), f(w), f(h))
	return e.pool.extract(ctx, pdf, header, nil)
}

func hasBlankPage(t *Text) bool {
	for _, p := range t.Pages {
		if strings.TrimSpace(p.Text) == "" {
			return true
		}
	}
	return false
}

// helperPool hands out helpers, Options.Workers at once, shared between
// tenants (the context's fairshare.TenantOf) under Options.Fair: a tenant
// holds at most its share while others wait, a tenant with no helper
// starts on a reserve helper when all are busy, and waiters are served
// least helper time first. Idle helpers wait in a stack (the warmest is
// reused first); a helper that failed, timed out or is due for recycling
// is killed on release and a new one is spawned on demand.
type helperPool struct {
	bin  string
	opts Options
	// cpuLimit is the helper's RLIMIT_CPU; a helper is recycled before its
	// CPU time comes within one document's deadline of it, so the limit
	// only ever stops a runaway document the deadline missed.
	cpuLimit time.Duration
	gate     *fairshare.Gate
	// binDir holds our copy of the helper when bin itself is out of the
	// helpers' reach; removed on Close.
	binDir string

	mu     sync.Mutex
	idle   []*helper
	closed bool
	// netns: 0 not tried yet, 1 helpers get a private network namespace,
	// -1 the kernel or container refused it (then helpers share ours).
	netns   int
	spawned int // helpers started (tests)
	// starting is set while a spare helper is being started (keepSpare).
	starting bool

	// afterWrite, when set (tests only), runs after a request is written,
	// while the helper works on it.
	afterWrite func(ctx context.Context, pid int)
}

func newHelperPool(bin string, opts Options) (*helperPool, error) {
	p := &helperPool{
		bin:      bin,
		opts:     opts,
		cpuLimit: max(4*(opts.Timeout+time.Second), time.Minute).Truncate(time.Second),
		gate:     fairshare.NewGate(max(opts.Workers, 1), opts.Fair, nil),
	}
	if os.Geteuid() == 0 {
		if !othersCanExec(bin) {
			// A checkout under /root: nobody cannot reach the binary.
			// Run a copy from a root-owned directory others may only
			// traverse (no one else can swap the file).
			dir, copied, err := copyExecutable(bin)
			if err != nil {
				return nil, err
			}
			p.bin, p.binDir = copied, dir
		}
	}
	removeStaleDirs()
	h, err := p.spawn()
	if err != nil {
		if p.binDir != "" {
			os.RemoveAll(p.binDir)
		}
		return nil, err
	}
	p.idle = append(p.idle, h)
	return p, nil
}

// othersCanExec reports whether a user other than the owner and group can
// execute path: it and every directory above it carry the "others" x bit.
func othersCanExec(path string) bool {
	path, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// copyExecutable copies bin into a new directory (0711) as a 0755 file.
func copyExecutable(bin string) (dir, copied string, err error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", "", fmt.Errorf("resident: read %s: %w", bin, err)
	}
	dir, err = os.MkdirTemp("", "pdftext-resident-bin-*")
	if err != nil {
		return "", "", fmt.Errorf("resident: copy helper: %w", err)
	}
	copied = filepath.Join(dir, ResidentBinary)
	err = os.Chmod(dir, 0o711)
	if err == nil {
		err = os.WriteFile(copied, data, 0o755)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("resident: copy helper: %w", err)
	}
	return dir, copied, nil
}

// extract runs one request on a helper under ctx (already carrying the
// per-document deadline). check, when set, vets the document first, on the
// document's helper slot.
func (p *helperPool) extract(ctx context.Context, pdf []byte, header string, check func([]byte) error) (*Text, error) {
	if ctx.Err() != nil {
		// Not even started: no helper is killed for it.
		return nil, fmt.Errorf("resident: %w", ctxErr(ctx))
	}
	free, err := p.gate.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("resident: wait for a helper: %w", ctxErr(ctx))
	}
	defer free()
	if check != nil {
		if err := check(pdf); err != nil {
			return nil, fmt.Errorf("resident: %w", err)
		}
	}
	h, err := p.acquire()
	if err != nil {
		return nil, err
	}
	p.keepSpare()
	t, reusable, err := h.request(ctx, header, pdf, p.opts.MaxOutputBytes, p.afterWrite)
	p.release(h, reusable)
	return t, err
}

// acquire returns an idle helper or a new one; the caller holds a slot of
// the gate.
func (p *helperPool) acquire() (*helper, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("resident: engine closed")
	}
	for len(p.idle) > 0 {
		h := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !h.exited() {
			p.mu.Unlock()
			return h, nil
		}
		// Died while idle (killed from outside, OOM): no document lost.
		h.stop()
	}
	p.mu.Unlock()
	return p.spawn()
}

// release returns h to the idle stack, or kills it when it is not
// reusable (it died, timed out or broke the protocol: its state is
// unknown), the pool is closed or it is due for recycling.
func (p *helperPool) release(h *helper, ok bool) {
	if ok {
		h.docs++
		ok = !p.dueForRecycling(h)
	}
	p.mu.Lock()
	if ok && !p.closed {
		p.idle = append(p.idle, h)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	h.stop()
}

// recycleCheckEvery is how often a helper's /proc stat is read at most:
// reading it after every document was ≈ 4 % of the processor's Go CPU
// (`make bench -profile`). Skipping it for this long is safe: the last
// read left room for a whole document's deadline plus a second of CPU, and
// a single-threaded helper uses at most this much CPU in this much time;
// the RSS limit is a recycling hint (the address-space rlimit is the hard
// bound).
const recycleCheckEvery = 250 * time.Millisecond

func (p *helperPool) dueForRecycling(h *helper) bool {
	if h.docs >= p.opts.ResidentRecycleDocs {
		return true
	}
	now := time.Now()
	if !h.checked.IsZero() && now.Sub(h.checked) < recycleCheckEvery {
		return false
	}
	h.checked = now
	st, err := readProcStat(h.cmd.Process.Pid)
	if err != nil {
		return true // gone or unreadable: start afresh
	}
	return st.rss > p.opts.ResidentMaxRSS || st.cpu+p.opts.Timeout+time.Second >= p.cpuLimit
}

// spawn starts a helper in a jail (sandbox_linux.go):
//   - address space (MemoryLimitBytes), CPU time (cpuLimit), no core dumps,
//     no files written (RLIMIT_FSIZE 0) and few descriptors;
//   - an empty environment but for the locale, HOME and TMPDIR, which point
//     to a private directory (0700, owned by the helper's uid) that is also
//     its working directory and is removed with it;
//   - its own uid/gid when we are root, not dumpable, seccomp;
//   - private mount, network, pid and IPC namespaces where the kernel
//     allows them: always as root, through a user namespace otherwise;
//     containers that forbid namespaces leave the helper on ours;
//   - its own process group, killed with it, and SIGKILL when we die.
func (p *helperPool) spawn() (*helper, error) {
	p.mu.Lock()
	netns := p.netns
	p.mu.Unlock()
	h, err := p.start(netns >= 0)
	if err != nil && netns == 0 {
		// The namespace was refused (EPERM in most containers, EINVAL
		// without user namespaces): run without it from now on.
		h, err = p.start(false)
		if err == nil {
			netns = -1
		}
	} else if err == nil && netns == 0 {
		netns = 1
	}
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.netns = netns
	p.spawned++
	p.mu.Unlock()
	return h, nil
}

// privateDirPrefix names helpers' directories after the process that owns
// them, so that the directories of a process killed with its helpers (kill
// -9 leaves no one to remove them) can be found and removed later.
func privateDirPrefix(pid int) string { return fmt.Sprintf("pdftext-resident-p%d-", pid) }

// removeStaleDirs removes the helper directories of processes that no
// longer exist. os.Remove only removes empty directories, and helpers
// cannot write files (RLIMIT_FSIZE 0), so nothing else can be lost.
func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "pdftext-resident-p*-*"))
	for _, d := range dirs {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "pdftext-resident-p%d-", &pid); err != nil || pid <= 0 {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); errors.Is(err, os.ErrNotExist) {
			_ = os.Remove(d)
		}
	}
}

// start creates the private directory and starts one helper in it.
func (p *helperPool) start(netns bool) (*helper, error) {
	dir, err := os.MkdirTemp("", privateDirPrefix(os.Getpid())+"*")
	if err != nil {
		return nil, fmt.Errorf("resident: private dir: %w", err)
	}
	if err := chownToHelper(dir, dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("resident: private dir: %w", err)
	}
	j := jail{dir: dir, limits: p.limits(), namespaces: netns, env: []string{"LC_ALL=C.UTF-8", "HOME=" + dir, "TMPDIR=" + dir}}
	cmd := j.command(context.Background(), p.bin, []string{"--max-output", strconv.FormatInt(p.opts.MaxOutputBytes, 10)})
	// Our own pipes rather than cmd's: Wait (in the reaper goroutine) then
	// never closes the ends we read and write.
	inR, inW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("resident: pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("resident: pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	h := &helper{cmd: cmd, in: inW, outFile: outR, out: bufio.NewReaderSize(outR, 64<<10), dir: dir, done: make(chan struct{})}
	cmd.Stderr = &capWriter{w: &h.stderr, n: 4 << 10}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("resident: start %s: %w", p.bin, err)
	}
	go h.reap()
	// The helper announces itself; a binary that does not, or not within a
	// few seconds, is not ours or cannot load its libraries.
	timer := time.AfterFunc(10*time.Second, h.kill)
	hello, err := readFrame(h.out, 4<<10)
	timer.Stop()
	if err != nil || !bytes.HasPrefix(hello, []byte(residentHello)) {
		h.stop()
		return nil, fmt.Errorf("resident: %s did not start: %s", p.bin, h.failure(err))
	}
	return h, nil
}

type rlimit struct {
	flag     string // prlimit(1)'s option
	res      int
	cur, max uint64
}

// limits are a helper's rlimits: address space, CPU time (SIGXCPU at the
// soft limit, SIGKILL a second later), no core dumps, no files written,
// few descriptors.
func (p *helperPool) limits() []rlimit {
	mem := p.opts.MemoryLimitBytes
	if mem <= 0 {
		mem = DefaultSubprocessMemory
	}
	cpu := uint64(p.cpuLimit / time.Second)
	return []rlimit{
		{"as", unix.RLIMIT_AS, uint64(mem), uint64(mem)},
		{"cpu", unix.RLIMIT_CPU, cpu, cpu + 1},
		{"core", unix.RLIMIT_CORE, 0, 0},
		{"fsize", unix.RLIMIT_FSIZE, 0, 0},
		{"nofile", unix.RLIMIT_NOFILE, 64, 64},
	}
}

// Close kills the idle helpers; helpers working on a document are killed
// when they finish it.
func (p *helperPool) Close() error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, h := range idle {
		h.stop()
	}
	if p.binDir != "" {
		// Helpers still working keep their executable open; unlinking it
		// does not disturb them.
		return os.RemoveAll(p.binDir)
	}
	return nil
}

// idlePids lists the process ids of idle helpers (tests).
func (p *helperPool) idlePids() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	pids := make([]int, len(p.idle))
	for i, h := range p.idle {
		pids[i] = h.cmd.Process.Pid
	}
	return pids
}

// helper is one running pdftext-resident process.
type helper struct {
	cmd     *exec.Cmd
	in      *os.File
	outFile *os.File
	out     *bufio.Reader
	dir     string
	stderr  bytes.Buffer // the first 4 KiB; read only once the process is reaped
	docs    int
	checked time.Time // last read of its /proc stat (dueForRecycling)

	done    chan struct{} // closed when the process has been reaped
	waitErr error         // set before done is closed
}

func (h *helper) reap() {
	h.waitErr = h.cmd.Wait()
	close(h.done)
}

func (h *helper) exited() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// kill ends the helper's process group at once.
func (h *helper) kill() {
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
}

// stop kills the helper, waits until it is reaped and removes its files.
func (h *helper) stop() {
	h.kill()
	<-h.done
	h.in.Close()
	h.outFile.Close()
	os.RemoveAll(h.dir)
}

// failure describes why the helper stopped answering: its exit status and
// the start of its stderr (complete once Wait has returned), or the read
// error while it still runs.
func (h *helper) failure(readErr error) string {
	select {
	case <-h.done:
	case <-time.After(time.Second):
		return fmt.Sprintf("no answer (%v)", readErr)
	}
	msg := "exited"
	if h.waitErr != nil {
		msg = h.waitErr.Error()
	}
	if s := strings.TrimSpace(h.stderr.String()); s != "" {
		msg += ": " + s
	}
	return msg
}

// request sends one document and reads the answer. A deadline kills the
// helper (which ends both pipes). reusable is true when the helper answered
// within the protocol, its verdict on an unreadable document included; any
// other failure leaves it unusable and the caller kills it.
func (h *helper) request(ctx context.Context, header string, pdf []byte, maxOut int64, afterWrite func(context.Context, int)) (t *Text, reusable bool, err error) {
	stop := context.AfterFunc(ctx, h.kill)
	defer func() {
		// A deadline that fires after the answer was read still kills the
		// helper: it must not go back to the pool.
		if !stop() {
			reusable = false
		}
	}()
	frame := make([]byte, 4, 4+len(header)+1)
	binary.BigEndian.PutUint32(frame, uint32(len(header)+1+len(pdf)))
	frame = append(append(frame, header...), '\n')
	// Two writes: the document is not copied into one buffer with its head.
	_, err = h.in.Write(frame)
	if err == nil {
		_, err = h.in.Write(pdf)
	}
	if err == nil && afterWrite != nil {
		afterWrite(ctx, h.cmd.Process.Pid)
	}
	var resp []byte
	if err == nil {
		// The text cap plus 8 bytes of page header per page; a page
		// header per 64 bytes of text is far more than any document has.
		resp, err = readFrame(h.out, maxOut+maxOut/8+(1<<20))
	}
	// Past the deadline the helper is being killed, whatever it answered:
	// the timeout is decided here, not from the answer.
	if ctx.Err() != nil {
		return nil, false, fmt.Errorf("resident: %w", ctxErr(ctx))
	}
	if err != nil {
		// A crash on a document is the document's: poppler died reading it.
		return nil, false, fmt.Errorf("resident: %w: helper died: %s", ErrUnreadable, h.failure(err))
	}
	return parseResponse(resp, maxOut)
}

// readFrame reads one length-prefixed frame of at most limit bytes.
func readFrame(r io.Reader, limit int64) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if int64(n) > limit {
		return nil, fmt.Errorf("frame of %d bytes exceeds %d", n, limit)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// parseResponse decodes an answer: 'O' and pages, 'U' unreadable, 'L' too
// much text. reusable is false for an answer outside the protocol.
func parseResponse(resp []byte, maxOut int64) (t *Text, reusable bool, err error) {
	if len(resp) == 0 {
		return nil, false, errors.New("resident: empty answer")
	}
	body := resp[1:]
	switch resp[0] {
	case 'O':
	case 'U':
		return nil, true, fmt.Errorf("resident: %w: %s", ErrUnreadable, body)
	case 'L':
		return nil, true, fmt.Errorf("resident: %w: %w (%s)", ErrUnreadable, errOutputTooLarge, body)
	default:
		return nil, false, fmt.Errorf("resident: answer with status %q", resp[0])
	}
	t = &Text{}
	var total int64
	for len(body) > 0 {
		if len(body) < 8 {
			return nil, false, errors.New("resident: truncated page header")
		}
		num := binary.BigEndian.Uint32(body)
		n := binary.BigEndian.Uint32(body[4:])
		body = body[8:]
		if uint64(n) > uint64(len(body)) {
			return nil, false, errors.New("resident: truncated page text")
		}
		if num == 0 { // poppler's messages, one a line (the protocol's page 0)
			t.Damage = damageOf(strings.Split(string(body[:n]), "\n"))
			body = body[n:]
			continue
		}
		total += int64(n)
		if total > maxOut {
			return nil, true, fmt.Errorf("resident: %w: %w (%d bytes)", ErrUnreadable, errOutputTooLarge, maxOut)
		}
		t.Pages = append(t.Pages, Page{Number: int(num), Text: string(body[:n]), Engine: EngineResident})
		body = body[n:]
	}
	if len(t.Pages) == 0 {
		return nil, true, fmt.Errorf("resident: %w: no pages in range", ErrUnreadable)
	}
	return t, true, nil
}

// procStat is what recycling reads of a helper: resident set and CPU time.
type procStat struct {
	rss int64
	cpu time.Duration
}

// readProcStat reads /proc/PID/stat: utime and stime (fields 14, 15, in
// clock ticks, 100 per second on Linux) and rss (field 24, in pages).
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may contain spaces: count after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return procStat{}, errors.New("malformed stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	rss, err3 := strconv.ParseInt(f[21], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, err
	}
	return procStat{rss: rss * int64(os.Getpagesize()), cpu: time.Duration(utime+stime) * 10 * time.Millisecond}, nil
}
