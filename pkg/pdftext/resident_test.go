package pdftext

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/pdftext/pdftexttest"
	"github.com/stretchr/testify/require"
)

// newTestResident starts a resident engine on the test helper.
func newTestResident(t *testing.T, opts Options) *residentEngine {
	t.Helper()
	opts.ResidentBin = pdftexttest.ResidentBin(t)
	e, err := newResident(opts.withDefaults(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// trimLines drops trailing blanks of every line: the one liberty the
// resident engine takes against `pdftotext -layout`.
var trailingBlanks = regexp.MustCompile(`(?m)[ \t]+$`)

func trimLines(s string) string { return trailingBlanks.ReplaceAllString(s, "") }

// corpusTextPDFs is every text PDF of the corpus: the sets the pdfium
// engine is measured on plus the synthetic orders.
func corpusTextPDFs(t *testing.T) []string {
	files := pdftexttest.CorpusTextPDFs(t)
	syn, err := filepath.Glob(filepath.Join(pdftexttest.SharedDir(t), "corpus", "synthetic", "*.pdf"))
	require.NoError(t, err)
	return append(files, syn...)
}

// TestResidentMatchesPdftotext: the resident engine's text is the text of
// `pdftotext -layout` on every text PDF of the corpus, page by page.
func TestResidentMatchesPdftotext(t *testing.T) {
	t.Parallel()
	requireTool(t, "pdftotext")
	eng := newTestResident(t, Options{Workers: 2})
	files := corpusTextPDFs(t)
	require.GreaterOrEqual(t, len(files), 40)
	for _, f := range files {
		want, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", f, "-").Output()
		require.NoError(t, err, f)
		pdf, err := os.ReadFile(f)
		require.NoError(t, err)
		got, err := eng.Extract(t.Context(), pdf)
		require.NoError(t, err, f)
		require.Equal(t, []string{EngineResident}, got.Engines(), f)
		require.Equal(t, trimLines(string(want)), trimLines(got.String()), f)
		for i, p := range got.Pages {
			require.Equal(t, i+1, p.Number, f)
		}
	}
}

// TestResidentRegionMatchesPdftotext: a crop through the resident engine
// (pixels scaled to points) equals `pdftotext -layout -f -l -r -x -y -W -H`
// at several resolutions, and the pdftotext engine runs exactly that.
func TestResidentRegionMatchesPdftotext(t *testing.T) {
	t.Parallel()
	requireTool(t, "pdftotext")
	res := newTestResident(t, Options{Workers: 1})
	ptt, err := New(Options{Engine: EnginePdftotext})
	require.NoError(t, err)
	corpus := filepath.Join(pdftexttest.SharedDir(t), "corpus")
	cases := []struct {
		file string
		r    Region
	}{
		// fr.publicationannoncelegale.yml's date area (invoice2data).
		{"invoice2data/tests/compare/NetpresseInvoice.pdf", Region{FirstPage: 1, LastPage: 1, X: 0, Y: 155, W: 825, H: 170, Resolution: 100}},
		{"orders/contoso-po-Adatum-Adel.pdf", Region{X: 0, Y: 0, W: 300, H: 200}},
		{"orders/contoso-po-Adatum-Adel.pdf", Region{FirstPage: 1, LastPage: 1, X: 1200, Y: 300, W: 1300, H: 900, Resolution: 300}},
		{"orders/orderx-ex01-order-comfort.pdf", Region{FirstPage: 2, LastPage: 3, X: 50, Y: 100, W: 600, H: 500, Resolution: 150}},
		{"synthetic/greatlakes-3.pdf", Region{FirstPage: 2, X: 0, Y: 0, W: 612, H: 400}},
		{"other/mustang-invoice-103767.pdf", Region{FirstPage: 1, LastPage: 1, Resolution: 200}},
	}
	for _, c := range cases {
		path := filepath.Join(corpus, c.file)
		pdf, err := os.ReadFile(path)
		require.NoError(t, err)
		r := c.r
		args := []string{"-layout", "-enc", "UTF-8", "-f", strconv.Itoa(max(r.FirstPage, 1)), "-l", strconv.Itoa(r.LastPage),
			"-r", strconv.Itoa(r.dpi()), "-x", strconv.Itoa(r.X), "-y", strconv.Itoa(r.Y), "-W", strconv.Itoa(r.W), "-H", strconv.Itoa(r.H), path, "-"}
		want, err := exec.Command("pdftotext", args...).Output()
		require.NoError(t, err)
		require.NotEmpty(t, strings.TrimSpace(string(want)), "%s %+v: the crop holds text", c.file, r)

		got, err := ptt.ExtractRegion(t.Context(), pdf, r)
		require.NoError(t, err)
		require.Equal(t, string(want), got.String(), "pdftotext %s %+v", c.file, r)
		require.Equal(t, max(r.FirstPage, 1), got.Pages[0].Number)

		got, err = res.ExtractRegion(t.Context(), pdf, r)
		require.NoError(t, err)
		require.Equal(t, trimLines(string(want)), trimLines(got.String()), "resident %s %+v", c.file, r)
		require.Equal(t, max(r.FirstPage, 1), got.Pages[0].Number)
	}
}

func TestAutoPrefersResident(t *testing.T) {
	t.Parallel()
	e, err := New(Options{ResidentBin: pdftexttest.ResidentBin(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	got, err := e.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Equal(t, []string{EngineResident}, got.Engines())
	require.Regexp(t, `(?m)^\s*Order No:\s{2,}PO-4711$`, got.Pages[0].Text)
}

// A relative helper path (INTAKE_PDF_RESIDENT_BIN=bin/pdftext-resident, a
// bench run with -bin ../../bin) names the helper from our working
// directory, not from the helper's private one: it starts.
func TestResidentRelativePath(t *testing.T) {
	bin := pdftexttest.ResidentBin(t)
	t.Chdir(filepath.Dir(bin))
	e, err := New(Options{Engine: EngineResident, ResidentBin: filepath.Join(".", filepath.Base(bin))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	got, err := e.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Equal(t, []string{EngineResident}, got.Engines())
}

// TestResidentSkipsColourManagement: the helper exports its own
// cmsOpenProfileFromMem, so poppler never opens an ICC profile (building
// Little CMS transforms was over half of the helper's CPU; see the source).
// A build without the export would silently pay that cost again.
func TestResidentSkipsColourManagement(t *testing.T) {
	t.Parallel()
	f, err := elf.Open(pdftexttest.ResidentBin(t))
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.DynamicSymbols()
	require.NoError(t, err)
	exported := false
	for _, s := range syms {
		if s.Name == "cmsOpenProfileFromMem" && s.Section != elf.SHN_UNDEF {
			exported = true
		}
	}
	require.True(t, exported, "pdftext-resident must define and export cmsOpenProfileFromMem (-Wl,--export-dynamic-symbol)")
}

func TestResidentUnavailable(t *testing.T) {
	t.Parallel()
	_, err := New(Options{Engine: EngineResident, ResidentBin: filepath.Join(t.TempDir(), ResidentBinary)})
	require.ErrorIs(t, err, ErrUnavailable)
	// A program that does not speak the protocol is not a helper.
	_, err = New(Options{Engine: EngineResident, ResidentBin: "/bin/true"})
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorContains(t, err, "did not start")
}

// TestResidentSandbox reads the limits, uid, environment, working directory
// and network namespace of a live helper from /proc.
func TestResidentSandbox(t *testing.T) {
	t.Parallel()
	eng := newTestResident(t, Options{Workers: 1, Timeout: 10 * time.Second, MemoryLimitBytes: 768 << 20})
	pids := eng.pool.idlePids()
	require.Len(t, pids, 1)
	pid := pids[0]
	proc := func(name string) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
		require.NoError(t, err)
		return string(b)
	}
	limits := proc("limits")
	limit := func(name string) []string {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s+(\S+)\s+(\S+)`).FindStringSubmatch(limits)
		require.NotNil(t, m, "%s in\n%s", name, limits)
		return m[1:]
	}
	require.Equal(t, []string{strconv.Itoa(768 << 20), strconv.Itoa(768 << 20)}, limit("Max address space"))
	// 4 × (timeout + 1 s), at least a minute; the helper is recycled before
	// it comes within one deadline of it.
	require.Equal(t, []string{"60", "61"}, limit("Max cpu time"))
	require.Equal(t, []string{"0", "0"}, limit("Max core file size"))
	require.Equal(t, []string{"0", "0"}, limit("Max file size"))
	require.Equal(t, []string{"64", "64"}, limit("Max open files"))

	env := strings.Split(strings.TrimRight(proc("environ"), "\x00"), "\x00")
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"LC_ALL=C.UTF-8", "HOME=" + cwd, "TMPDIR=" + cwd}, env)
	fi, err := os.Stat(cwd)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	uid := regexp.MustCompile(`(?m)^Uid:\s+(\d+)`).FindStringSubmatch(proc("status"))[1]
	if os.Geteuid() == 0 {
		require.Equal(t, strconv.Itoa(int(helperCred(cwd).Uid)), uid, "a helper started by root runs as its own uid")
		require.EqualValues(t, helperCred(cwd).Uid, fi.Sys().(*syscall.Stat_t).Uid, "the private dir belongs to the helper")
	} else {
		require.Equal(t, strconv.Itoa(os.Getuid()), uid)
	}

	ours, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	require.NoError(t, err)
	eng.pool.mu.Lock()
	netns := eng.pool.netns
	eng.pool.mu.Unlock()
	if netns == 1 {
		require.NotEqual(t, ours, theirs, "helper in its own network namespace")
	} else {
		t.Logf("network namespaces are refused here; the helper shares ours (%s)", theirs)
		require.Equal(t, ours, theirs)
	}

	// Still serves documents with all of that in place.
	got, err := eng.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Contains(t, got.String(), "PO-4711")
}

// TestResidentKilledMidDocument: a helper killed while it works on a
// document costs that document (ErrUnreadable, "helper died") and nothing
// else: the next document gets a fresh helper.
func TestResidentKilledMidDocument(t *testing.T) {
	t.Parallel()
	eng := newTestResident(t, Options{Workers: 1})
	var killed int
	eng.pool.afterWrite = func(_ context.Context, pid int) {
		killed = pid
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	}
	_, err := eng.Extract(t.Context(), slowPDF())
	require.ErrorIs(t, err, ErrUnreadable)
	require.NotErrorIs(t, err, ErrTimeout)
	require.ErrorContains(t, err, "helper died")
	require.ErrorContains(t, err, "killed")
	require.False(t, processAlive(killed))

	eng.pool.afterWrite = nil
	got, err := eng.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Contains(t, got.String(), "PO-4711")
	require.NotContains(t, eng.pool.idlePids(), killed)
}

// TestResidentTimeoutKillsHelper: the per-document deadline kills the
// helper working on the document; the pool replaces it.
func TestResidentTimeoutKillsHelper(t *testing.T) {
	t.Parallel()
	eng := newTestResident(t, Options{Workers: 1, Timeout: 200 * time.Millisecond})
	var used int
	// The document is still in the helper when the deadline passes.
	eng.pool.afterWrite = func(ctx context.Context, pid int) {
		used = pid
		<-ctx.Done()
	}
	_, err := eng.Extract(t.Context(), slowPDF())
	require.ErrorIs(t, err, ErrTimeout)
	require.NotErrorIs(t, err, ErrUnreadable)
	require.Eventually(t, func() bool { return !processAlive(used) }, 10*time.Second, 10*time.Millisecond)

	eng.pool.afterWrite = nil
	// The next document's deadline covers starting the replacement (the
	// sandbox's trampoline and poppler's libraries): not 200 ms on a busy
	// machine.
	eng.opts.Timeout = 10 * time.Second
	got, err := eng.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Contains(t, got.String(), "PO-4711")
}

// TestResidentRecycling: a helper is replaced after ResidentRecycleDocs
// documents, and after any document once its RSS is above ResidentMaxRSS.
func TestResidentRecycling(t *testing.T) {
	t.Parallel()
	t.Run("after N documents", func(t *testing.T) {
		t.Parallel()
		eng := newTestResident(t, Options{Workers: 1, ResidentRecycleDocs: 3})
		var pids []int
		for range 7 {
			_, err := eng.Extract(t.Context(), orderPDF())
			require.NoError(t, err)
			idle := eng.pool.idlePids()
			if len(idle) == 1 {
				pids = append(pids, idle[0])
			} else {
				pids = append(pids, 0) // recycled, the next one starts on demand
			}
		}
		// Documents 1-3 on the first helper (killed after the 3rd), 4-6 on
		// the second, 7 on the third.
		require.Equal(t, pids[0], pids[1])
		require.Zero(t, pids[2])
		require.NotZero(t, pids[3])
		require.NotEqual(t, pids[0], pids[3])
		require.Equal(t, pids[3], pids[4])
		require.Zero(t, pids[5])
		require.NotZero(t, pids[6])
		require.False(t, processAlive(pids[0]))
		eng.pool.mu.Lock()
		defer eng.pool.mu.Unlock()
		require.Equal(t, 3, eng.pool.spawned)
	})
	t.Run("above the RSS limit", func(t *testing.T) {
		t.Parallel()
		eng := newTestResident(t, Options{Workers: 1, ResidentMaxRSS: 1})
		pid := eng.pool.idlePids()[0]
		_, err := eng.Extract(t.Context(), orderPDF())
		require.NoError(t, err)
		require.Empty(t, eng.pool.idlePids())
		require.False(t, processAlive(pid))
	})
}

// TestResidentConcurrent: more documents at once than helpers; each answer
// belongs to its own document.
func TestResidentConcurrent(t *testing.T) {
	t.Parallel()
	eng := newTestResident(t, Options{Workers: 2})
	errs := make(chan error, 12)
	for i := range 12 {
		go func() {
			want := fmt.Sprintf("Order No: %d", 1000+i)
			got, err := eng.Extract(context.Background(), pdftexttest.PDF([]string{want}))
			if err == nil && !strings.Contains(got.String(), want) {
				err = fmt.Errorf("document %d: got %q", i, got.String())
			}
			errs <- err
		}()
	}
	for range 12 {
		require.NoError(t, <-errs)
	}
	require.LessOrEqual(t, len(eng.pool.idlePids()), 2)
}

func TestRegionValidation(t *testing.T) {
	t.Parallel()
	eng := newTestResident(t, Options{Workers: 1})
	for _, r := range []Region{{X: -1}, {W: -5}, {FirstPage: 3, LastPage: 2}, {Resolution: -72}} {
		_, err := eng.ExtractRegion(t.Context(), orderPDF(), r)
		require.ErrorIs(t, err, ErrBadRegion, "%+v", r)
	}
	// Pages past the end: pdftotext prints nothing, and neither do we.
	_, err := eng.ExtractRegion(t.Context(), orderPDF(), Region{FirstPage: 5, LastPage: 6})
	require.ErrorIs(t, err, ErrUnreadable)
}

// Every engine refuses a malformed region the same way, before it runs a
// tool: a template's bad area is a template error, not an unreadable PDF.
func TestRegionValidationEveryEngine(t *testing.T) {
	t.Parallel()
	for _, name := range []string{EnginePdftotext, EnginePdfium, EngineOCR, EngineAuto} {
		t.Run(name, func(t *testing.T) {
			eng, err := New(Options{Engine: name, Workers: 1, ResidentBin: pdftexttest.ResidentBin(t)})
			if errors.Is(err, ErrUnavailable) {
				t.Skipf("%s: %v", name, err)
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = eng.Close() })
			for _, r := range []Region{{X: -1}, {H: -5}, {FirstPage: 3, LastPage: 2}, {Resolution: -72}} {
				_, err := eng.ExtractRegion(t.Context(), orderPDF(), r)
				require.ErrorIs(t, err, ErrBadRegion, "%+v", r)
			}
		})
	}
}

// TestPdfiumRegion: the pdfium engine crops by the same rectangle: the
// date area of invoice2data's Netpresse template holds the date and the
// customer block, not the rest of the invoice.
func TestPdfiumRegion(t *testing.T) {
	t.Parallel()
	path := filepath.Join(pdftexttest.SharedDir(t), "corpus", "invoice2data", "tests", "compare", "NetpresseInvoice.pdf")
	pdf, err := os.ReadFile(path)
	require.NoError(t, err)
	eng := sharedPdfium(t)
	full, err := eng.Extract(t.Context(), pdf)
	require.NoError(t, err)
	require.Contains(t, full.String(), "Total TTC")

	got, err := eng.ExtractRegion(t.Context(), pdf, Region{FirstPage: 1, LastPage: 1, X: 0, Y: 155, W: 825, H: 170, Resolution: 100})
	require.NoError(t, err)
	require.Len(t, got.Pages, 1)
	require.Regexp(t, `(?m)^Date : 28/11/2022$`, got.Pages[0].Text)
	require.Contains(t, got.Pages[0].Text, "69100 Villeurbanne")
	require.NotContains(t, got.Pages[0].Text, "Total TTC")
	// The same lines as pdftotext's crop (pdftexttest's score: every word
	// and every label/value pair on one line).
	if _, err := exec.LookPath("pdftotext"); err == nil {
		want, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", "-f", "1", "-l", "1", "-r", "100",
			"-x", "0", "-y", "155", "-W", "825", "-H", "170", path, "-").Output()
		require.NoError(t, err)
		s := pdftexttest.Compare(string(want), got.String())
		require.Equal(t, 1.0, s.WordRecall, "missing %q", s.Missing)
		require.Equal(t, 1.0, s.LabelValue, "split %q", s.Split)
	}

	// Page range without a crop: page 2 of a two-page order, numbered 2.
	got, err = eng.ExtractRegion(t.Context(), orderPDF(), Region{FirstPage: 2})
	require.NoError(t, err)
	require.Len(t, got.Pages, 1)
	require.Equal(t, 2, got.Pages[0].Number)
	require.Contains(t, got.Pages[0].Text, "Delivery: Musterstraße 1, Köln")
}

// TestAutoFallbackShrinksWhenIdle: the pdfium fallback is closed after
// FallbackIdle without documents (its wasm memory goes back to the OS) and
// started again when a document needs it. Not parallel: its pdfium
// instances would add to TestCorpusMalformed's peak RSS measurement.
func TestAutoFallbackShrinksWhenIdle(t *testing.T) {
	opts := Options{Workers: 1, FallbackIdle: 50 * time.Millisecond}.withDefaults()
	a := &autoEngine{opts: opts, primary: &fakeEngine{err: fmt.Errorf("primary: %w", ErrUnreadable)}}
	t.Cleanup(func() { _ = a.Close() })
	for range 2 {
		got, err := a.Extract(t.Context(), orderPDF())
		require.NoError(t, err)
		require.Equal(t, []string{EnginePdfium}, got.Engines())
		require.True(t, a.fallbackOpen())
		require.Eventually(t, func() bool { return !a.fallbackOpen() }, 10*time.Second, 10*time.Millisecond,
			"fallback still open after its idle period")
	}
}

// TestResidentUnreadableKeepsHelper: a document poppler rejects is an
// answer, not a failure of the helper: the same process serves the next.
func TestResidentUnreadableKeepsHelper(t *testing.T) {
	t.Parallel()
	eng := newTestResident(t, Options{Workers: 1})
	pids := eng.pool.idlePids()
	require.Len(t, pids, 1)
	for _, pdf := range [][]byte{nil, []byte("%PDF-1.4\nnot really"), orderPDF()[:200]} {
		_, err := eng.Extract(t.Context(), pdf)
		require.ErrorIs(t, err, ErrUnreadable)
		require.NotContains(t, err.Error(), "helper died")
	}
	require.Equal(t, pids, eng.pool.idlePids())
	got, err := eng.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Contains(t, got.String(), "PO-4711")
	require.Equal(t, pids, eng.pool.idlePids())
}

// TestResidentBinaryOutOfReach: under root, a helper binary nobody cannot
// reach (a checkout under /root) runs from a private copy.
func TestResidentBinaryOutOfReach(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("helpers change uid only under root")
	}
	src, err := os.ReadFile(pdftexttest.ResidentBin(t))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o700))
	bin := filepath.Join(dir, ResidentBinary)
	require.NoError(t, os.WriteFile(bin, src, 0o755))
	require.False(t, othersCanExec(bin))

	e, err := newResident(Options{Workers: 1, ResidentBin: bin}.withDefaults(), nil)
	require.NoError(t, err)
	copyDir := e.pool.binDir
	require.NotEmpty(t, copyDir)
	require.True(t, othersCanExec(e.pool.bin))
	got, err := e.Extract(t.Context(), orderPDF())
	require.NoError(t, err)
	require.Contains(t, got.String(), "PO-4711")
	require.NoError(t, e.Close())
	_, err = os.Stat(copyDir)
	require.True(t, os.IsNotExist(err), "copy removed on Close")
}

// TestResidentRemovesStaleDirs: the private directories a killed process
// left behind are removed when a pool starts; live owners' stay.
func TestResidentRemovesStaleDirs(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := cmd.Process.Pid // reaped: no such process any more
	stale, err := os.MkdirTemp("", privateDirPrefix(dead)+"*")
	require.NoError(t, err)
	live, err := os.MkdirTemp("", privateDirPrefix(os.Getpid())+"*")
	require.NoError(t, err)
	defer os.Remove(live)
	newTestResident(t, Options{Workers: 1})
	_, err = os.Stat(stale)
	require.True(t, os.IsNotExist(err), "stale dir %s kept", stale)
	_, err = os.Stat(live)
	require.NoError(t, err)
}
