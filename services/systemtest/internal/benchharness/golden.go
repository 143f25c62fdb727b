package benchharness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/services/systemtest/internal/sysproc"
)

// Golden is phase 3b (issue 14): invoice2data's 16 golden documents, the
// templates loaded once, one document after the other in one process, each
// row measured over the same rounds: docintake with the resident engine,
// docintake with one pdftotext process per document, and invoice2data
// itself when it can be installed.
type Golden struct {
	Documents, Rounds int
	Rows              []GoldenRow
	PeerSkipped       string // why the invoice2data row is missing
}

// GoldenRow is one extractor's figures.
type GoldenRow struct {
	Name      string
	Equal     int           // outputs equal to the expected JSON, of Documents
	Wall, CPU time.Duration // per document; CPU of the process and its children
}

// goldenCase is one input of invoice2data's golden test.
type goldenCase struct {
	path string
	data []byte
	want []byte // expected JSON
}

// golden measures phase 3b. It is skipped (with a line in the log) when
// ../shared is absent or the run uses generated orders.
func (h *harness) golden(ctx context.Context) error {
	if h.opts.Generated {
		h.logf("golden: skipped (generated orders requested)")
		return nil
	}
	root := filepath.Join(h.repo, "..", "shared", "corpus", "invoice2data")
	cases, err := loadGoldenCases(root)
	if err != nil {
		h.logf("golden: skipped (%v)", err)
		return nil
	}
	set, err := template.LoadWith(template.LoadOptions{Lenient: true},
		filepath.Join(root, "tests", "custom", "templates"), filepath.Join(root, "templates"))
	if err != nil {
		return err
	}
	g := Golden{Documents: len(cases), Rounds: h.opts.ExtractRounds}
	bin := filepath.Join(h.sys.binDir, pdftext.ResidentBinary)
	for _, engine := range []string{pdftext.EngineResident, pdftext.EnginePdftotext} {
		eng, err := pdftext.New(pdftext.Options{Engine: engine, ResidentBin: bin})
		if err != nil {
			h.logf("golden: %s engine unavailable: %v", engine, err)
			continue
		}
		name := "docintake, resident engine"
		if engine == pdftext.EnginePdftotext {
			name = "docintake, one pdftotext process per document"
		}
		row, err := h.goldenRun(ctx, name, eng, set, cases)
		eng.Close()
		if err != nil {
			return err
		}
		g.Rows = append(g.Rows, row)
	}
	if peer, why := h.invoice2dataPeer(ctx, root, cases); why != "" {
		g.PeerSkipped = why
		h.logf("golden: invoice2data row skipped: %s", why)
	} else {
		g.Rows = append(g.Rows, peer)
	}
	for _, r := range g.Rows {
		h.logf("golden: %s: %d/%d equal, %s wall, %s CPU per document", r.Name, r.Equal, g.Documents, ms(r.Wall), ms(r.CPU))
	}
	h.rep.Golden = g
	return nil
}

// RunGolden runs phase 3b alone, as `make bench` runs it after the
// extraction phase: opts.ExtractRounds rounds, the resident helper taken
// from opts.BinDir (default: the repository's bin/, as `make build` leaves
// it). installPeer false measures invoice2data only where it is installed
// already (no pip run). Documents is 0 when ../shared is absent.
func RunGolden(ctx context.Context, opts Options, installPeer bool) (Golden, error) {
	h, err := newHarness(opts)
	if err != nil {
		return Golden{}, err
	}
	defer h.prog.stop()
	h.noPeerInstall = !installPeer
	h.sys = &system{binDir: h.opts.BinDir}
	if h.sys.binDir == "" {
		h.sys.binDir = filepath.Join(h.repo, "bin")
	}
	err = h.golden(ctx)
	return h.rep.Golden, err
}

// newHarness starts a run of Run or RunGolden: the options' defaults, the
// progress line (the caller stops it), the repository root.
func newHarness(opts Options) (*harness, error) {
	opts.defaults()
	h := &harness{opts: opts, start: time.Now(), rep: newReport()}
	h.prog = newProgress(opts.Progress, h.start)
	repo, err := sysproc.RepoRoot()
	if err != nil {
		h.prog.stop()
		return nil, err
	}
	h.repo = repo
	return h, nil
}

func loadGoldenCases(root string) ([]goldenCase, error) {
	var cases []goldenCase
	for _, dir := range []string{"tests/compare", "tests/custom"} {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			name, ext := e.Name(), filepath.Ext(e.Name())
			if (ext != ".pdf" && ext != ".txt") || strings.HasPrefix(name, "saeco") || strings.HasPrefix(name, "camelot") {
				continue
			}
			p := filepath.Join(root, dir, name)
			want, err := os.ReadFile(strings.TrimSuffix(p, ext) + ".json")
			if err != nil {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			cases = append(cases, goldenCase{path: p, data: data, want: want})
		}
	}
	return cases, nil
}

// goldenRun extracts every case Rounds times the way intakectl extract
// does: the engine's text (a .txt is the text), keyword selection, area
// crops through the same engine, invoice2data's JSON.
func (h *harness) goldenRun(ctx context.Context, name string, eng pdftext.Engine, set *template.Set, cases []goldenCase) (GoldenRow, error) {
	row := GoldenRow{Name: name}
	// Round -1 warms up, untimed, as the peer's script does: what is
	// measured is the steady throughput with templates loaded, not one-off
	// start-up (a helper's spawn here, Python's lazy imports there).
	var cpu0 time.Duration
	var t0 time.Time
	for round := -1; round < h.opts.ExtractRounds; round++ {
		if round == 0 {
			cpu0, t0 = treeCPU(), time.Now()
		}
		for _, c := range cases {
			text, area := string(c.data), template.AreaFunc(nil)
			if filepath.Ext(c.path) == ".pdf" {
				t, err := eng.Extract(ctx, c.data)
				if err != nil {
					return row, fmt.Errorf("%s: %w", c.path, err)
				}
				text, area = t.String(), catalogue.AreaFunc(eng, c.data)
			}
			tpl := set.Choose(text) // as Set.Run chooses when it keeps no trace
			if tpl == nil {
				continue
			}
			res, err := tpl.Extract(ctx, text, &template.ExtractOptions{Area: area})
			if err != nil {
				return row, fmt.Errorf("%s: %w", c.path, err)
			}
			got, err := template.MarshalInvoice2dataJSON([]*template.Result{res})
			if err != nil {
				return row, err
			}
			if round == -1 && sameGoldenJSON(c.want, got) {
				row.Equal++
			}
		}
	}
	n := time.Duration(h.opts.ExtractRounds * len(cases))
	row.Wall, row.CPU = time.Since(t0)/n, (treeCPU()-cpu0)/n
	return row, nil
}

// sameGoldenJSON compares as invoice2data's test does: values equal after
// dropping template_name, 1 and 1.0 told apart.
func sameGoldenJSON(want, got []byte) bool {
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return nil
		}
		if list, ok := v.([]any); ok {
			for _, e := range list {
				if m, ok := e.(map[string]any); ok {
					delete(m, "template_name")
				}
			}
		}
		return v
	}
	w := decode(want)
	return w != nil && reflect.DeepEqual(w, decode(got))
}

// treeCPU is the CPU time of this process, its reaped children (pdftotext
// runs) and its live children (resident helpers).
func treeCPU() time.Duration {
	self := os.Getpid()
	var ticks float64
	if st, ok := readProcStat(strconv.Itoa(self)); ok {
		ticks += st.ticks
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if st, ok := readProcStat(e.Name()); ok && st.ppid == self {
			ticks += st.ticks
		}
	}
	return time.Duration(ticks / clockTicks * float64(time.Second))
}

// invoice2dataScript runs invoice2data in one Python process as the issue
// measured it: templates loaded once, one untimed warm-up round, then each
// golden input extracted Rounds times (its text memo, where the version has one, forgotten before each
// round, as docintake keeps no text between documents), wall and CPU (process and children: its pdftotext runs) per
// document, and how many outputs equal the expected JSON.
const invoice2dataScript = `
import json, os, resource, sys, tempfile, time
from invoice2data import extract_data
from invoice2data.extract.loader import read_templates
from invoice2data.output import to_json
root, rounds, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
templates = read_templates(os.path.join(root, "tests", "custom", "templates")) + read_templates(os.path.join(root, "templates"))
def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
try:
    import invoice2data.input as inputs
except ImportError:
    inputs = None
def forget_texts():
    # Newer invoice2data memoises each file's text (an lru_cache keyed by
    # path and mtime): a second round would time cache hits, not
    # extraction. Compiled templates and patterns stay loaded.
    memo = getattr(inputs, "_cached_to_text", None)
    if memo is not None and hasattr(memo, "cache_clear"):
        memo.cache_clear()
equal = 0
for r in range(-1, rounds):  # round -1 warms up, untimed
    if r == 0:
        c0, t0 = cpu(), time.time()
    forget_texts()
    for p in paths:
        res = extract_data(p, templates=templates)
        if r == -1:
            want = json.load(open(os.path.splitext(p)[0] + ".json"))
            # invoice2data's own JSON output, as its golden test writes it.
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                to_json.write_to_file([res] if res else [], f.name, "%Y-%m-%d")
                got = json.load(open(f.name))
            for d in want + got:
                d.pop("template_name", None)
            equal += want == got
n = rounds * len(paths)
print(json.dumps({"equal": equal, "wall": (time.time() - t0) / n, "cpu": (cpu() - c0) / n}))
`

// invoice2dataPeer finds an interpreter that can import invoice2data and
// runs invoice2dataScript with it. An existing installation is tried first:
// INTAKE_BENCH_PYTHON (an interpreter, default python3) with
// INTAKE_BENCH_INVOICE2DATA_PYTHONPATH (a source directory holding the
// invoice2data package) when either is set; then the private venv under the
// cache directory, into which invoice2data is pip-installed when missing.
// why is non-empty when the row cannot be measured here.
func (h *harness) invoice2dataPeer(ctx context.Context, root string, cases []goldenCase) (row GoldenRow, why string) {
	py, env, how, why := h.invoice2dataPython(ctx)
	if why != "" {
		return row, why
	}
	args := []string{"-c", invoice2dataScript, root, strconv.Itoa(h.opts.ExtractRounds)}
	for _, c := range cases {
		args = append(args, c.path)
	}
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return row, fmt.Sprintf("invoice2data run failed (%v): %s", err, lastLine(stderr.Bytes()))
	}
	var r struct {
		Equal     int
		Wall, CPU float64
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return row, fmt.Sprintf("invoice2data output %q: %v", lastLine(out), err)
	}
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	return GoldenRow{Name: "invoice2data (Python, pdftotext; " + how + ")", Equal: r.Equal, Wall: sec(r.Wall), CPU: sec(r.CPU)}, ""
}

// invoice2dataPython returns the interpreter and environment that import
// invoice2data and how it was found, or why none does.
func (h *harness) invoice2dataPython(ctx context.Context) (py string, env []string, how, why string) {
	imports := func(py string, env []string) error {
		cmd := exec.CommandContext(ctx, py, "-c", "import invoice2data")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s cannot import invoice2data (%w): %s", py, err, lastLine(out))
		}
		return nil
	}
	var tried []string
	if py, src := os.Getenv("INTAKE_BENCH_PYTHON"), os.Getenv("INTAKE_BENCH_INVOICE2DATA_PYTHONPATH"); py != "" || src != "" {
		if py == "" {
			py = "python3"
		}
		env, how := os.Environ(), "interpreter "+py
		if src != "" {
			// The source directory goes first so that it wins over an
			// installed package of the same name.
			p := src
			if old := os.Getenv("PYTHONPATH"); old != "" {
				p += string(os.PathListSeparator) + old
			}
			env, how = append(env, "PYTHONPATH="+p), how+", PYTHONPATH="+src
		}
		err := imports(py, env)
		if err == nil {
			return py, env, how, ""
		}
		h.logf("golden: %v; trying the private venv", err)
		tried = append(tried, err.Error())
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", nil, "", err.Error()
	}
	venv := filepath.Join(cache, "docintake-bench", "invoice2data-venv")
	py = filepath.Join(venv, "bin", "python")
	fail := func(msg string) (string, []string, string, string) {
		return "", nil, "", strings.Join(append(tried, msg), "; ")
	}
	if err := imports(py, nil); err != nil {
		if h.noPeerInstall {
			return fail(fmt.Sprintf("no venv with invoice2data (%v) and installing is off", err))
		}
		h.logf("golden: installing invoice2data from the Python package index into %s", venv)
		ictx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ictx, "python3", "-m", "venv", venv).CombinedOutput(); err != nil {
			return fail(fmt.Sprintf("python3 -m venv %s failed (%v): %s", venv, err, lastLine(out)))
		}
		if out, err := exec.CommandContext(ictx, py, "-m", "pip", "install", "--quiet", "--timeout", "15", "invoice2data").CombinedOutput(); err != nil {
			return fail(fmt.Sprintf("pip install invoice2data failed (%v): %s", err, lastLine(out)))
		}
	}
	return py, nil, "venv " + venv, ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
