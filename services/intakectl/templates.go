package intakectl

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/config/pdfopts"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
)

// templatesUsage lists the template lifecycle commands (docs/templates.md,
// "Template lifecycle").
const templatesUsage = `usage: intakectl templates <command>
  check DIR...                                   validate templates offline
  draft [--name N] [--party-id ID] [--out F] PDF...  draft a template from sample PDFs
  test FILE|DIR...                               run the templates' samples offline
  push [--client ID] [--comment TEXT] [--force] FILE|DIR...
  list [--client ID] [--json]
  history NAME [--client ID]
  show NAME [--client ID] [--version N]
  diff NAME A B [--client ID]
  rollback NAME --to N [--client ID] [--comment TEXT]
  disable NAME [--client ID] | enable NAME [--client ID]
  pull DIR [--client ID]`

// runTemplateLifecycle runs every templates subcommand but check.
func runTemplateLifecycle(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, templatesUsage)
		return 2
	}
	switch args[0] {
	case "test":
		return templatesTest(ctx, args[1:], env)
	case "push":
		return templatesPush(ctx, args[1:], env)
	case "list":
		return templatesList(ctx, args[1:], env)
	case "history":
		return templatesHistory(ctx, args[1:], env)
	case "show":
		return templatesShow(ctx, args[1:], env)
	case "diff":
		return templatesDiff(ctx, args[1:], env)
	case "rollback":
		return templatesRollback(ctx, args[1:], env)
	case "enable", "disable":
		return templatesEnable(ctx, args[0], args[1:], env)
	case "pull":
		return templatesPull(ctx, args[1:], env)
	case "draft":
		return runTemplatesDraft(ctx, args[1:], env)
	}
	fmt.Fprintln(env.Stderr, templatesUsage)
	return 2
}

// templateFiles expands FILE|DIR arguments to template files; directories
// are walked, skipping samples folders.
func templateFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, a)
			continue
		}
		fs, err := template.Files(a)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	sort.Strings(files)
	return files, nil
}

// checked is one template file read, validated and tested.
type checked struct {
	file    string
	push    store.TemplatePush
	results []catalogue.SampleResult
	err     error // the template is invalid or unreadable
}

func (c checked) failed() bool { return c.err != nil || catalogue.FailedSamples(c.results) > 0 }

// checkFiles reads and tests every template file, printing one line per
// sample and returns the checks with a summary line.
func checkFiles(ctx context.Context, env Env, files []string) ([]checked, error) {
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return nil, err
	}
	// Samples are read and run as the processor reads and runs documents
	// (INTAKE_PDF_*, INTAKE_TEMPLATE_BUDGET).
	ctx = template.WithBudget(ctx, cfg.TemplateBudget)
	pdfOpts := pdfopts.Options(cfg)
	st := &catalogue.SampleText{Options: &pdfOpts}
	defer func() { _ = st.Close() }()
	var out []checked
	nSamples, nFailed, nBad := 0, 0, 0
	for _, f := range files {
		c := checked{file: f}
		c.push, c.err = catalogue.ReadTemplateFile(f)
		if c.err == nil {
			c.results, c.err = catalogue.RunSamples(ctx, c.push, st.Text)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case c.err != nil:
			nBad++
			fmt.Fprintf(env.Stdout, "FAIL %s: %s\n", f, strings.ReplaceAll(c.err.Error(), "\n", "\n     "))
		case len(c.results) == 0:
			fmt.Fprintf(env.Stdout, "%s: no samples\n", c.push.Name)
		}
		for _, r := range c.results {
			fmt.Fprintf(env.Stdout, "%s: %s\n", c.push.Name, r.Line())
		}
		nSamples += len(c.results)
		nFailed += catalogue.FailedSamples(c.results)
		out = append(out, c)
	}
	fmt.Fprintf(env.Stdout, "%d templates (%d invalid), %d samples, %d passed, %d failed\n",
		len(files), nBad, nSamples, nSamples-nFailed, nFailed)
	return out, nil
}

// checkPaths parses fs from args and checks the FILE|DIR arguments; code
// is non-zero (the exit code) when nothing could be checked.
func checkPaths(ctx context.Context, fs *flag.FlagSet, args []string, env Env, usage string) (checks []checked, code int) {
	paths, ok := parseFlags(fs, args)
	if !ok {
		return nil, 2
	}
	if len(paths) == 0 {
		fmt.Fprintln(env.Stderr, usage)
		return nil, 2
	}
	files, err := templateFiles(paths)
	if err != nil {
		return nil, fail(env, "%v", err)
	}
	if checks, err = checkFiles(ctx, env, files); err != nil {
		return nil, fail(env, "%v", err)
	}
	return checks, 0
}

func templatesTest(ctx context.Context, args []string, env Env) int {
	checks, code := checkPaths(ctx, newFlags("templates test", env), args, env, "usage: intakectl templates test FILE|DIR...")
	if code != 0 {
		return code
	}
	for _, c := range checks {
		if c.failed() {
			return 1
		}
	}
	return 0
}

// pusher names who pushed: the operator's login, as the audit trail shows.
func pusher(env Env) string {
	u := env.Getenv("USER")
	if u == "" {
		u = "unknown"
	}
	return "intakectl:" + u
}

func templatesPush(ctx context.Context, args []string, env Env) int {
	fs := newFlags("templates push", env)
	client := fs.String("client", "", "store as this client's own template (default: global)")
	comment := fs.String("comment", "", "why this version (shown by history)")
	force := fs.Bool("force", false, "store even when samples fail (recorded as forced)")
	checks, code := checkPaths(ctx, fs, args, env, "usage: intakectl templates push [--client ID] [--comment TEXT] [--force] FILE|DIR...")
	if code != 0 {
		return code
	}
	// All or nothing: one invalid template or failing sample refuses the
	// whole push, so a directory never goes live half.
	for _, c := range checks {
		if c.err != nil || (c.failed() && !*force) {
			fmt.Fprintln(env.Stderr, "intakectl templates push: refused, nothing stored (fix the template or its samples; --force stores anyway)")
			return 1
		}
	}
	return withStore(ctx, env, func(st *store.Store) int {
		for _, c := range checks {
			p := c.push
			p.ClientID, p.Comment, p.PushedBy, p.Forced = *client, *comment, pusher(env), c.failed()
			res, err := st.PushTemplate(ctx, p)
			if err != nil {
				return fail(env, "%s: %v", c.file, err)
			}
			if res.Changed {
				fmt.Fprintf(env.Stdout, "%s v%d\n", p.Name, res.Version)
			} else {
				fmt.Fprintf(env.Stdout, "%s unchanged\n", p.Name)
			}
		}
		return 0
	})
}

// templateJSON is one entry of `templates list --json`.
type templateJSON struct {
	Name       string     `json:"name"`
	Client     *string    `json:"client"`
	Version    int        `json:"version"`
	SHA256     string     `json:"sha256"`
	PartyIDs   []string   `json:"party_ids"`
	Enabled    bool       `json:"enabled"`
	UpdatedAt  time.Time  `json:"updated_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

func templatesList(ctx context.Context, args []string, env Env) int {
	fs := newFlags("templates list", env)
	client := fs.String("client", "", "the templates this client may use (its own and the global ones)")
	asJSON := fs.Bool("json", false, "JSON output")
	if _, ok := parseFlags(fs, args); !ok {
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		list, err := st.ListTemplates(ctx, store.TemplatesFilter{All: *client == "", ClientID: *client})
		if err != nil {
			return fail(env, "%v", err)
		}
		if *asJSON {
			out := make([]templateJSON, 0, len(list))
			for _, t := range list {
				j := templateJSON{Name: t.Name, Version: t.Version, SHA256: hex.EncodeToString(t.SHA256),
					PartyIDs: t.PartyIDs, Enabled: t.Enabled, UpdatedAt: t.UpdatedAt, LastUsedAt: t.LastUsedAt}
				if t.ClientID != "" {
					j.Client = &t.ClientID
				}
				out = append(out, j)
			}
			b, _ := json.MarshalIndent(out, "", "  ")
			fmt.Fprintf(env.Stdout, "%s\n", b)
			return 0
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSCOPE\tVERSION\tENABLED\tPARTY IDS\tUPDATED\tLAST USED")
		for _, t := range list {
			used := "-"
			if t.LastUsedAt != nil {
				used = t.LastUsedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\tv%d\t%t\t%s\t%s\t%s\n", t.Name, scope(t.ClientID), t.Version, t.Enabled,
				dash(strings.Join(t.PartyIDs, ",")), t.UpdatedAt.UTC().Format(time.RFC3339), used)
		}
		_ = tw.Flush()
		return 0
	})
}

func scope(clientID string) string {
	if clientID == "" {
		return "global"
	}
	return "client " + clientID
}

// nameArgs parses NAME [--client ID] plus the flags add registers.
func nameArgs(name string, args []string, env Env, nargs int, add func(fs *flag.FlagSet)) (client string, rest []string, ok bool) {
	fs := newFlags("templates "+name, env)
	c := fs.String("client", "", "the client's own template (default: global)")
	if add != nil {
		add(fs)
	}
	rest, ok = parseFlags(fs, args)
	if !ok {
		return "", nil, false
	}
	if len(rest) != nargs {
		fmt.Fprintln(env.Stderr, templatesUsage)
		return "", nil, false
	}
	return *c, rest, true
}

func templatesHistory(ctx context.Context, args []string, env Env) int {
	client, rest, ok := nameArgs("history", args, env, 1, nil)
	if !ok {
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		cur, err := st.TemplateVersion(ctx, client, rest[0], 0)
		if err != nil {
			return fail(env, "%v", err)
		}
		h, err := st.TemplateHistory(ctx, client, rest[0])
		if err != nil {
			return fail(env, "%v", err)
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "VERSION\tPUSHED\tBY\tSHA256\tFORCED\tCOMMENT")
		for _, v := range h {
			mark := " "
			if v.Version == cur.Version {
				mark = "*"
			}
			fmt.Fprintf(tw, "%sv%d\t%s\t%s\t%x\t%t\t%s\n", mark, v.Version, v.PushedAt.UTC().Format(time.RFC3339),
				v.PushedBy, v.SHA256[:6], v.Forced, v.Comment)
		}
		_ = tw.Flush()
		return 0
	})
}

func templatesShow(ctx context.Context, args []string, env Env) int {
	var version *int
	client, rest, ok := nameArgs("show", args, env, 1, func(fs *flag.FlagSet) {
		version = fs.Int("version", 0, "version (default: current)")
	})
	if !ok {
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		v, err := st.TemplateVersion(ctx, client, rest[0], *version)
		if err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stderr, "# %s v%d (%s) sha256 %x, pushed %s by %s, %d samples\n", v.Name, v.Version, scope(v.ClientID),
			v.SHA256, v.PushedAt.UTC().Format(time.RFC3339), v.PushedBy, len(v.Samples))
		_, _ = env.Stdout.Write(v.Content)
		return 0
	})
}

func templatesDiff(ctx context.Context, args []string, env Env) int {
	client, rest, ok := nameArgs("diff", args, env, 3, nil)
	if !ok {
		return 2
	}
	a, errA := strconv.Atoi(strings.TrimPrefix(rest[1], "v"))
	b, errB := strconv.Atoi(strings.TrimPrefix(rest[2], "v"))
	if errA != nil || errB != nil {
		fmt.Fprintln(env.Stderr, "usage: intakectl templates diff NAME A B (version numbers)")
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		va, err := st.TemplateVersion(ctx, client, rest[0], a)
		if err != nil {
			return fail(env, "%v", err)
		}
		vb, err := st.TemplateVersion(ctx, client, rest[0], b)
		if err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "--- %s v%d\n+++ %s v%d\n", va.Name, a, vb.Name, b)
		for _, l := range diffLines(string(va.Content), string(vb.Content)) {
			fmt.Fprintln(env.Stdout, l)
		}
		return 0
	})
}

// diffLines is a line diff (longest common subsequence): unchanged lines
// start with " ", removed with "-", added with "+". Templates are small, so
// the quadratic table is fine.
func diffLines(a, b string) []string {
	x, y := strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out = append(out, " "+x[i])
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+x[i])
			i++
		default:
			out = append(out, "+"+y[j])
			j++
		}
	}
	return out
}

func templatesRollback(ctx context.Context, args []string, env Env) int {
	var to *int
	var comment *string
	client, rest, ok := nameArgs("rollback", args, env, 1, func(fs *flag.FlagSet) {
		to = fs.Int("to", 0, "the version whose content becomes the new current version")
		comment = fs.String("comment", "", "why (default: rollback to vN)")
	})
	if !ok || *to <= 0 {
		if ok {
			fmt.Fprintln(env.Stderr, "usage: intakectl templates rollback NAME --to N [--client ID]")
		}
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		res, err := st.RollbackTemplate(ctx, client, rest[0], *to, *comment, pusher(env))
		if err != nil {
			return fail(env, "%v", err)
		}
		if res.Changed {
			fmt.Fprintf(env.Stdout, "%s v%d\n", rest[0], res.Version)
		} else {
			fmt.Fprintf(env.Stdout, "%s unchanged\n", rest[0])
		}
		return 0
	})
}

func templatesEnable(ctx context.Context, verb string, args []string, env Env) int {
	client, rest, ok := nameArgs(verb, args, env, 1, nil)
	if !ok {
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		if err := st.SetTemplateEnabled(ctx, client, rest[0], verb == "enable"); err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "%s %sd\n", rest[0], verb)
		return 0
	})
}

// templatesPull writes the current versions of one scope as files: NAME.yml
// (the file as pushed) and NAME.samples/, so a pulled directory can be
// tested, edited and pushed again.
func templatesPull(ctx context.Context, args []string, env Env) int {
	client, rest, ok := nameArgs("pull", args, env, 1, nil)
	if !ok {
		return 2
	}
	dir := rest[0]
	return withStore(ctx, env, func(st *store.Store) int {
		list, err := st.ListTemplates(ctx, store.TemplatesFilter{ClientID: client, OnlyClient: client != ""})
		if err != nil {
			return fail(env, "%v", err)
		}
		for _, t := range list {
			v, err := st.TemplateVersion(ctx, t.ClientID, t.Name, t.Version)
			if err != nil {
				return fail(env, "%v", err)
			}
			file := filepath.Join(dir, t.Name+filepath.Ext(v.Filename))
			if err := writeFile(file, v.Content); err != nil {
				return fail(env, "%v", err)
			}
			for _, s := range v.Samples {
				if err := writeFile(filepath.Join(catalogue.SamplesDir(file), filepath.Base(s.Name)), s.Content); err != nil {
					return fail(env, "%v", err)
				}
			}
			fmt.Fprintf(env.Stdout, "%s v%d -> %s\n", t.Name, t.Version, file)
		}
		return 0
	})
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o640)
}
