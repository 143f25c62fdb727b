package intakectl

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/config/pdfopts"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
)

func init() {
	register("extract", "extract documents offline: extract --templates DIR [--template NAME|--party-id ID] | --generic [--engine E] [--timeout D] [--output json|xml|text|debug] FILE...", runExtract)
	register("templates", "templates: check DIR... | draft PDF... | test | push | list | history | show | diff | rollback | disable | enable | pull (templates help)", runTemplates)
}

// Exit codes of extract, as template authors and scripts rely on (README
// "intakectl extract"): 0 success, 1 an extraction error (unreadable file,
// a value that does not parse, a template that does not load), 2 usage or
// no template, and with --output xml or debug 3 rejected, 4 ignored, 5
// deferred.
const (
	exitError      = 1
	exitNoTemplate = 2
	exitRejected   = 3
	exitIgnored    = 4
	exitDeferred   = 5
)

// stringsFlag is a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func runExtract(ctx context.Context, args []string, env Env) int {
	// INTAKE_PDF_TIMEOUT, INTAKE_OCR_PAGE_TIMEOUT and INTAKE_TEMPLATE_BUDGET
	// apply as in the processor, so a document is tried under the
	// deadlines it will meet.
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "intakectl extract: %v\n", err)
		return 2
	}
	fl, files, ok := parseExtractFlags(env, cfg, args)
	if !ok {
		return 2
	}
	if fl.generic { // extract_generic.go
		return extractGeneric(ctx, env, cfg, genericArgs{files: files, output: fl.output, engine: fl.engine, timeout: fl.timeout,
			mode: fl.mode, templated: len(fl.dirs) > 0 || fl.name != "" || fl.party != ""})
	}
	x, code := newExtractJob(env, cfg, fl, files)
	if x == nil {
		return code
	}
	defer x.close()
	for _, f := range files {
		if err := x.file(ctx, f); err != nil {
			return fail(env, "%v", err)
		}
	}
	if err := x.writeJSON(); err != nil {
		return fail(env, "%v", err)
	}
	return x.code
}

// extractFlags is extract's command line.
type extractFlags struct {
	dirs                                            stringsFlag
	name, party, engine, output, mode, mappingsFile string
	lenient, strict, generic                        bool
	timeout                                         time.Duration
}

func parseExtractFlags(env Env, cfg config.Config, args []string) (*extractFlags, []string, bool) {
	fs := newFlags("extract", env)
	var fl extractFlags
	fs.Var(&fl.dirs, "templates", "template directory (repeatable)")
	fs.StringVar(&fl.name, "template", "", "use this template (by docintake name)")
	fs.StringVar(&fl.party, "party-id", "", "use the template of this party id")
	fs.StringVar(&fl.engine, "engine", "auto", "text engine: auto, resident, pdfium, pdftotext, ocr")
	fs.StringVar(&fl.output, "output", "json", "json (invoice2data's output), xml (openTRANS), text (layout text), debug")
	fs.StringVar(&fl.mode, "result-mode", "", "result mode: no_items")
	fs.StringVar(&fl.mappingsFile, "mappings", "", "CSV of mappings (kind,key,value) to resolve the template's lookups offline")
	fs.BoolVar(&fl.lenient, "lenient", false, "keep every template, its broken parts disabled (broken parts and duplicate names are warnings)")
	fs.BoolVar(&fl.strict, "strict", false, "refuse to run when a template does not load strictly, as the services push them")
	fs.DurationVar(&fl.timeout, "timeout", cfg.PDFTimeout, "deadline for one PDF's text, OCR included (default INTAKE_PDF_TIMEOUT)")
	fs.BoolVar(&fl.generic, "generic", false, "read with the built-in generic reader instead of templates (output json, xml or debug)")
	files, ok := parseFlags(fs, args)
	return &fl, files, ok
}

// extractJob is one template extract over its files: what every file runs
// with, the text engine (opened on the first PDF: .txt inputs need none),
// the JSON results so far and the exit code.
type extractJob struct {
	env     Env
	output  string
	set     *template.Set
	ropts   template.RunOptions // copied for every file
	opts    pdftext.Options
	eng     pdftext.Engine
	results []json.RawMessage
	code    int
}

// newExtractJob checks the flags and loads the mappings and templates; a
// nil job means extract exits with code.
func newExtractJob(env Env, cfg config.Config, fl *extractFlags, files []string) (*extractJob, int) {
	if len(files) == 0 || (fl.output != "text" && len(fl.dirs) == 0) {
		fmt.Fprintln(env.Stderr, "usage: intakectl extract --templates DIR [--template NAME | --party-id ID] [--engine auto|resident|pdfium|pdftotext|ocr] [--timeout D] [--output json|xml|text|debug] [--result-mode no_items] FILE...")
		return nil, 2
	}
	if fl.timeout <= 0 {
		fmt.Fprintln(env.Stderr, "intakectl extract: --timeout must be positive")
		return nil, 2
	}
	if fl.name != "" && fl.party != "" {
		fmt.Fprintln(env.Stderr, "intakectl extract: give --template or --party-id, not both")
		return nil, 2
	}
	switch fl.output {
	case "json", "xml", "text", "debug":
	default:
		fmt.Fprintf(env.Stderr, "intakectl extract: unknown --output %q\n", fl.output)
		return nil, 2
	}
	rm, err := document.ParseResultMode(fl.mode)
	if err != nil {
		fmt.Fprintf(env.Stderr, "intakectl extract: %v\n", err)
		return nil, 2
	}
	var mapper template.Mapper
	if fl.mappingsFile != "" {
		m, err := loadMappingsCSV(fl.mappingsFile)
		if err != nil {
			return nil, fail(env, "%v", err)
		}
		mapper = m
	}
	if fl.strict && fl.lenient {
		fmt.Fprintln(env.Stderr, "intakectl extract: give --strict or --lenient, not both")
		return nil, 2
	}
	x := &extractJob{env: env, output: fl.output,
		ropts: template.RunOptions{Template: fl.name, PartyID: fl.party, Mode: rm, Mapper: mapper, Debug: fl.output == "debug",
			Budget: cfg.TemplateBudget}}
	if len(fl.dirs) > 0 {
		if x.set, err = loadExtractTemplates(env, fl.dirs, fl.strict, fl.lenient); err != nil {
			return nil, fail(env, "%v", err)
		}
	}
	// One engine for the whole run: the resident helpers stay warm from
	// file to file, as in the processor.
	x.opts = pdfopts.Options(cfg)
	x.opts.Engine = fl.engine
	x.opts.Timeout = fl.timeout // PDFOptions set INTAKE_OCR_PAGE_TIMEOUT
	return x, 0
}

func (x *extractJob) close() {
	if x.eng != nil {
		_ = x.eng.Close()
	}
}

// file extracts one file and reports it as the output asks; the error is
// one that ends the whole run.
func (x *extractJob) file(ctx context.Context, f string) error {
	env := x.env
	ropts := x.ropts
	// A business document attached to the PDF wins over its text.
	run, engines, err := structuredRun(ctx, env, f, x.set, ropts, x.output)
	var warnings []string
	if run == nil && err == nil {
		in, rerr := readText(ctx, f, &x.eng, x.opts)
		if rerr != nil {
			fmt.Fprintf(env.Stderr, "intakectl extract: %s: %v\n", f, rerr)
			x.code = max(x.code, exitError)
			x.results = append(x.results, errorJSON(f, rerr))
			return nil
		}
		engines, warnings = in.engines, in.warnings
		if x.output != "debug" {
			for _, w := range warnings {
				fmt.Fprintf(env.Stderr, "intakectl extract: %s: warning: %s\n", f, w)
			}
		}
		if x.output == "text" {
			fmt.Fprintf(env.Stdout, "== %s (engine: %s)\n%s\n", f, strings.Join(engines, ", "), in.text)
			return nil
		}
		if in.pdf != nil { // a .txt input has no PDF to crop: area fields read the whole text
			ropts.Area = catalogue.AreaFunc(x.eng, in.pdf)
		}
		run, err = x.set.Run(ctx, in.text, ropts)
		template.UnreadableVerdict(run, in.text, in.damage) // as the processor: never not_an_order for an unread PDF
	}
	if err != nil {
		if e, ok := document.AsError(err); ok && e.Code == "template_not_found" {
			fmt.Fprintf(env.Stderr, "intakectl extract: %s: %s\n", f, e.Message)
			x.code = max(x.code, exitNoTemplate)
			return nil
		}
		x.code = max(x.code, exitError)
	}
	switch x.output {
	case "debug":
		return x.writeDebug(f, engines, warnings, run, err)
	case "json":
		return x.addJSON(f, run, err)
	case "xml":
		if err != nil {
			fmt.Fprintf(env.Stderr, "intakectl extract: %s: %v\n", f, err)
			return nil
		}
		x.code = max(x.code, writeXML(env, f, run))
	}
	return nil
}

// writeDebug prints every field and line, also when a value failed to
// convert: the trace marks the failing one, the error follows.
func (x *extractJob) writeDebug(f string, engines, warnings []string, run *template.Run, err error) error {
	w := x.env.Stdout
	fmt.Fprintf(w, "== %s (engine: %s)\n", f, strings.Join(engines, ", "))
	for _, warning := range warnings {
		fmt.Fprintf(w, "== warning: %s\n", warning)
	}
	if run != nil && run.Trace != nil {
		if err := run.Trace.WriteText(w); err != nil {
			return err
		}
	}
	if err != nil {
		fmt.Fprintf(w, "== error: %v\n", err)
		return nil
	}
	fmt.Fprintf(w, "== outcome: %s\n", outcomeText(run.Outcome))
	// A script that checks a template with the debug view must see a
	// rejection as --output xml reports it.
	x.code = max(x.code, outcomeExit(run))
	return nil
}

// addJSON adds invoice2data's output for the file to the results, then
// what went wrong with it as {"file", "error"}: never a silent empty list.
func (x *extractJob) addJSON(f string, run *template.Run, err error) error {
	if run == nil || run.Result == nil {
		switch {
		case err != nil:
		case run == nil || run.Template == nil:
			err = errors.New("no template matched")
			x.code = max(x.code, exitNoTemplate)
		default:
			// Decided before any field was read (an attached invoice
			// given to an order template, a template that reads
			// attachments only): no invoice2data output.
			err = fmt.Errorf("template %s: %s", run.Template.Name, outcomeText(run.Outcome))
			x.code = max(x.code, exitError)
		}
		fmt.Fprintf(x.env.Stderr, "intakectl extract: %s: %v\n", f, err)
		x.results = append(x.results, errorJSON(f, err))
		return nil
	}
	one, merr := resultJSON(run.Result)
	if merr != nil {
		return merr
	}
	x.results = append(x.results, one...)
	var problems []string
	if len(one) == 0 {
		// invoice2data leaves out a document without its required
		// fields; say which.
		problems = append(problems, "required fields not found: "+strings.Join(run.Result.Missing, ", "))
	}
	problems = append(problems, run.Result.Errors...)
	if err != nil {
		fmt.Fprintf(x.env.Stderr, "intakectl extract: %s: %v\n", f, err)
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		x.code = max(x.code, exitError)
		x.results = append(x.results, errorJSON(f, errors.New(strings.Join(problems, "; "))))
	}
	return nil
}

// writeJSON prints the results of --output json (an empty list for none).
func (x *extractJob) writeJSON() error {
	if x.output != "json" {
		return nil
	}
	if x.results == nil {
		x.results = []json.RawMessage{}
	}
	b, err := json.MarshalIndent(x.results, "", "  ")
	if err != nil {
		return err
	}
	_, _ = x.env.Stdout.Write(append(b, '\n'))
	return nil
}

// loadExtractTemplates loads extract's templates. By default as invoice2data
// loads a folder: a file that does not load is a warning naming the file
// and why, and the rest are read (a folder such as invoice2data's own, with
// a few broken files, is still usable); what invoice2data runs past loads
// with a warning. --strict loads as the services push templates: any
// problem fails the run with file, line and key path. --lenient keeps
// every template with its broken parts disabled.
func loadExtractTemplates(env Env, dirs []string, strict, lenient bool) (*template.Set, error) {
	set, err := template.LoadWith(template.LoadOptions{Lenient: lenient, SkipBroken: !strict && !lenient}, dirs...)
	if err != nil {
		return nil, err
	}
	for _, w := range set.Warnings() {
		fmt.Fprintf(env.Stderr, "intakectl extract: warning: %s\n", w)
	}
	return set, nil
}

// resultJSON is invoice2data's JSON object for one result (none when its
// required fields are missing, as invoice2data leaves it out).
func resultJSON(res *template.Result) ([]json.RawMessage, error) {
	b, err := template.MarshalInvoice2dataJSON([]*template.Result{res})
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	return list, json.Unmarshal(b, &list)
}

// errorJSON is the --output json entry of a file that failed: its path and
// the error, in the list where its result would have been.
func errorJSON(file string, err error) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"file": file, "error": err.Error()})
	return b
}

func outcomeText(o *template.Outcome) string {
	if o == nil {
		return "none"
	}
	s := string(o.Status)
	if o.Reason != "" {
		s += " (" + o.Reason.WireValue() + ")"
	}
	if o.Detail != "" {
		s += ": " + o.Detail
	}
	return s
}

// outcomeExit is the exit code of a run's outcome: 0 success, 2 no template
// matched, 3 rejected, 4 ignored, 5 deferred.
func outcomeExit(run *template.Run) int {
	if run.Template == nil {
		return exitNoTemplate
	}
	switch run.Outcome.Status {
	case template.OutcomeSuccess:
		return 0
	case template.OutcomeRejected:
		return exitRejected
	case template.OutcomeIgnored:
		return exitIgnored
	}
	return exitDeferred
}

// writeXML prints the openTRANS document, or the outcome as one JSON line on
// stderr with its exit code.
func writeXML(env Env, file string, run *template.Run) int {
	if run.Template == nil {
		line(env.Stderr, "rejected", run.Outcome)
		return exitNoTemplate
	}
	switch run.Outcome.Status {
	case template.OutcomeSuccess:
		if err := opentrans.Write(env.Stdout, run.Order, opentrans.WriteOptions{}); err != nil {
			fmt.Fprintf(env.Stderr, "intakectl extract: %s: %v\n", file, err)
			return 1
		}
		return 0
	case template.OutcomeRejected:
		line(env.Stderr, "rejected", run.Outcome)
		return exitRejected
	case template.OutcomeIgnored:
		line(env.Stderr, "ignored", run.Outcome)
		return exitIgnored
	default:
		line(env.Stderr, "deferred_for_retry", run.Outcome)
		return exitDeferred
	}
}

func line(w io.Writer, status string, o *template.Outcome) {
	out := map[string]any{"status": status, "status_reason": nil}
	if o != nil && o.Reason != "" {
		out["status_reason"] = o.Reason.WireValue()
	}
	if o != nil && o.Detail != "" {
		out["detail"] = o.Detail
	}
	b, _ := json.Marshal(out)
	fmt.Fprintf(w, "%s\n", b)
}

// inputText is one input file's text for extract and draft.
type inputText struct {
	text     string
	pdf      []byte // nil for a .txt input
	engines  []string
	warnings []string // pages the engine left unread, the PDF's damage
	damage   []string // pdftext.Text.Damage
}

// readText returns a file's text: .txt files as they are (as invoice2data
// does), PDFs through the engine: the text, the PDF's bytes (nil for .txt),
// the engines used and the engine's warnings (pages left unread).
func readText(ctx context.Context, path string, eng *pdftext.Engine, opts pdftext.Options) (inputText, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return inputText{}, err
	}
	if strings.EqualFold(filepath.Ext(path), ".txt") {
		return inputText{text: string(data), engines: []string{"text file"}}, nil
	}
	if *eng == nil {
		e, err := pdftext.New(opts)
		if err != nil {
			return inputText{}, err
		}
		*eng = e
	}
	t, err := (*eng).Extract(ctx, data)
	if err != nil {
		return inputText{}, err
	}
	warnings := t.Warnings
	if note := template.DamageNote(t.Damage); note != "" {
		warnings = append(warnings[:len(warnings):len(warnings)], note)
	}
	return inputText{text: t.String(), pdf: data, engines: t.Engines(), warnings: warnings, damage: t.Damage}, nil
}

func runTemplates(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 || args[0] != "check" {
		return runTemplateLifecycle(ctx, args, env) // templates.go
	}
	if len(args) < 2 {
		fmt.Fprintln(env.Stderr, "usage: intakectl templates check DIR...")
		return 2
	}
	files, err := templateFiles(args[1:]) // templates.go
	if err != nil {
		return fail(env, "%v", err)
	}
	failed := 0
	byName, byParty := map[string]string{}, map[string]string{}
	for _, f := range files {
		var warnings []*template.LoadError
		data, err := os.ReadFile(f)
		if err == nil {
			var t *template.Template
			if t, err = template.Parse(f, data); err == nil {
				warnings = t.Warnings
				if len(t.Problems) > 0 {
					errs := make([]error, len(t.Problems))
					for i, p := range t.Problems {
						errs[i] = p
					}
					err = errors.Join(errs...)
				} else if prev, dup := byName[t.Name]; dup {
					err = fmt.Errorf("name %q is also used by %s", t.Name, prev)
				} else {
					byName[t.Name] = f
					for _, id := range t.DocIntake.PartyIDs {
						if prev, dup := byParty[id]; dup {
							// The first claim keeps the id, so a third file
							// is reported against the first, not this one.
							err = errors.Join(err, fmt.Errorf("party_id %q is also claimed by %s", id, prev))
							continue
						}
						byParty[id] = f
					}
				}
			}
		}
		if err != nil {
			failed++
			fmt.Fprintf(env.Stdout, "FAIL %s\n", f)
			for _, l := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(env.Stdout, "     %s\n", l)
			}
			for _, w := range warnings {
				fmt.Fprintf(env.Stdout, "     warning: %s\n", w)
			}
			continue
		}
		fmt.Fprintf(env.Stdout, "ok   %s\n", f)
		for _, w := range warnings {
			fmt.Fprintf(env.Stdout, "     warning: %s\n", w)
		}
	}
	fmt.Fprintf(env.Stdout, "%d templates, %d ok, %d failed\n", len(files), len(files)-failed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// csvMapper resolves lookups from a CSV file, so templates with mappings can
// be tried without a database.
type csvMapper map[[2]string]string

func (m csvMapper) Lookup(_ context.Context, kind, key string) (string, bool, error) {
	v, ok := m[[2]string{kind, key}]
	return v, ok, nil
}

// loadMappingsCSV reads kind,key,value rows (a header row "kind,key,value"
// is allowed). Errors name the line.
func loadMappingsCSV(path string) (csvMapper, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 3
	r.TrimLeadingSpace = true
	m := csvMapper{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("mappings %s: %w", path, err)
		}
		if line == 1 && strings.EqualFold(rec[0], "kind") && strings.EqualFold(rec[1], "key") {
			continue
		}
		m[[2]string{rec[0], rec[1]}] = rec[2]
	}
}
