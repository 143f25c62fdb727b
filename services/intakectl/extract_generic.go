package intakectl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/config/pdfopts"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/template"
)

// genericArgs are extract's flags as --generic uses them.
type genericArgs struct {
	files   []string
	output  string
	engine  string
	timeout time.Duration
	mode    string
	// templated: --templates, --template or --party-id was given, which
	// the generic reader has no use for.
	templated bool
}

// genericRead is one file read by the generic reader.
type genericRead struct {
	run      *template.Run   // the outcome and order (also of a structured attachment)
	res      *generic.Result // nil when a structured attachment decided
	engines  []string
	warnings []string
}

// extractGeneric is `intakectl extract --generic`: every file read as the
// processor reads a document uploaded with template=generic (a structured
// attachment first, else the layout text by the generic reader). Exit
// codes as extract's: 0 every file a success, 1 a file not readable, 2
// usage, 3 rejected.
func extractGeneric(ctx context.Context, env Env, cfg config.Config, a genericArgs) int {
	usage := "usage: intakectl extract --generic [--engine auto|resident|pdfium|pdftotext|ocr] [--timeout D] [--output json|xml|debug] [--result-mode no_items] FILE..."
	switch {
	case a.templated:
		fmt.Fprintln(env.Stderr, "intakectl extract: --generic reads without templates; drop --templates, --template and --party-id")
		return 2
	case len(a.files) == 0:
		fmt.Fprintln(env.Stderr, usage)
		return 2
	case a.output != "json" && a.output != "xml" && a.output != "debug":
		fmt.Fprintf(env.Stderr, "intakectl extract: --generic prints json, xml or debug, not %q\n", a.output)
		return 2
	case a.timeout <= 0:
		fmt.Fprintln(env.Stderr, "intakectl extract: --timeout must be positive")
		return 2
	}
	mode, err := document.ParseResultMode(a.mode)
	if err != nil {
		fmt.Fprintf(env.Stderr, "intakectl extract: %v\n", err)
		return 2
	}
	opts := pdfopts.Options(cfg)
	opts.Engine, opts.Timeout = a.engine, a.timeout
	var eng pdftext.Engine // opened on the first PDF, shared by all files
	defer func() {
		if eng != nil {
			_ = eng.Close()
		}
	}()
	code := 0
	results := []json.RawMessage{}
	for _, f := range a.files {
		r, err := readGenericFile(ctx, env, f, &eng, opts, mode, a.output)
		if err != nil {
			fmt.Fprintf(env.Stderr, "intakectl extract: %s: %v\n", f, err)
			results = append(results, errorJSON(f, err))
			code = max(code, exitError)
			continue
		}
		c, one, err := printGeneric(env, f, r, a.output)
		if err != nil {
			return fail(env, "%v", err)
		}
		code = max(code, c)
		if one != nil {
			results = append(results, one)
		}
	}
	if a.output == "json" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return fail(env, "%v", err)
		}
		_, _ = env.Stdout.Write(append(b, '\n'))
	}
	return code
}

// readGenericFile reads one file: its structured attachment if it carries
// one (the built-in order template decides, as in the processor), else its
// text through the generic reader.
func readGenericFile(ctx context.Context, env Env, f string, eng *pdftext.Engine, opts pdftext.Options, mode document.ResultMode, output string) (genericRead, error) {
	debug := output == "debug"
	ropts := template.RunOptions{Mode: mode, Debug: debug}
	run, engines, err := structuredRun(ctx, env, f, catalogue.GenericVersion.Set, ropts, output) // extract_embedded.go
	if err != nil || run != nil {
		return genericRead{run: run, engines: engines}, err
	}
	in, err := readText(ctx, f, eng, opts)
	if err != nil {
		return genericRead{}, err
	}
	// Received now, for the reader's date plausibility: as if uploaded.
	res, err := generic.ReadAs(ctx, in.text, mode, generic.Options{Debug: debug, ReceivedAt: time.Now()})
	if err != nil {
		return genericRead{}, err
	}
	run = res.Run()
	template.UnreadableVerdict(run, in.text, in.damage) // as the processor: never not_an_order for an unread PDF
	return genericRead{run: run, res: res, engines: in.engines, warnings: in.warnings}, nil
}

// printGeneric writes one file's reading and returns its exit code and,
// for --output json, its entry of the list.
func printGeneric(env Env, f string, r genericRead, output string) (int, json.RawMessage, error) {
	code := 0
	if r.run.Outcome.Status != template.OutcomeSuccess {
		code = exitRejected // the reader never ignores or defers
	}
	if output != "debug" {
		for _, w := range r.warnings {
			fmt.Fprintf(env.Stderr, "intakectl extract: %s: warning: %s\n", f, w)
		}
	}
	switch output {
	case "xml":
		if code != 0 {
			line(env.Stderr, "rejected", r.run.Outcome)
			return code, nil, nil
		}
		if err := opentrans.Write(env.Stdout, r.run.Order, opentrans.WriteOptions{}); err != nil {
			fmt.Fprintf(env.Stderr, "intakectl extract: %s: %v\n", f, err)
			return exitError, nil, nil
		}
		return 0, nil, nil
	case "json":
		b, err := genericJSON(f, r)
		return code, b, err
	}
	fmt.Fprintf(env.Stdout, "== %s (engine: %s)\n", f, strings.Join(r.engines, ", "))
	for _, w := range r.warnings {
		fmt.Fprintf(env.Stdout, "== warning: %s\n", w)
	}
	if r.res == nil && r.run.Trace != nil {
		if err := r.run.Trace.WriteText(env.Stdout); err != nil {
			return 0, nil, err
		}
	}
	if r.res != nil {
		if err := writeGenericDebug(env, r.res); err != nil {
			return 0, nil, err
		}
	}
	fmt.Fprintf(env.Stdout, "== outcome: %s\n", outcomeText(r.run.Outcome))
	return code, nil, nil
}

// genericJSON is a file's --output json entry: the outcome and the order
// as the result JSON carries it (on a rejection, what could be read; null
// when nothing).
func genericJSON(f string, r genericRead) (json.RawMessage, error) {
	out := struct {
		File         string            `json:"file"`
		Status       string            `json:"status"`
		StatusReason *string           `json:"status_reason"`
		Detail       string            `json:"detail,omitempty"`
		Order        *resultjson.Order `json:"order"`
	}{File: f, Status: string(r.run.Outcome.Status), Detail: r.run.Outcome.Detail}
	if r.run.Outcome.Reason != "" {
		w := r.run.Outcome.Reason.WireValue()
		out.StatusReason = &w
	}
	if r.run.Order != nil {
		o := resultjson.OrderOf(r.run.Order)
		out.Order = &o
	}
	return json.Marshal(out)
}

// writeGenericDebug prints every candidate the reader considered, kept or
// dropped and why, then the kept fields, each with its position: page,
// line and columns of the layout text (line and columns from 0, as
// generic.Position counts them) and the label it was anchored on.
func writeGenericDebug(env Env, res *generic.Result) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "== candidates")
	fmt.Fprintln(tw, "FIELD\tVALUE\tAT\tLABEL\tDECISION")
	for _, c := range res.Candidates {
		decision := "dropped"
		if c.Kept {
			decision = "kept"
		}
		if c.Why != "" {
			decision += ": " + c.Why
		}
		fmt.Fprintf(tw, "%s\t%q\t%s\t%s\t%s\n", c.Field, c.Value, at(c.At), c.At.Label, decision)
	}
	fmt.Fprintln(tw, "== fields")
	fmt.Fprintln(tw, "FIELD\tVALUE\tAT\tLABEL\t")
	for _, f := range res.Fields {
		fmt.Fprintf(tw, "%s\t%q\t%s\t%s\t\n", f.Name, f.Value, at(f.At), f.At.Label)
	}
	return tw.Flush()
}

// at is a position as "p1 l2 c94-99" (page from 1, line and columns from 0,
// the last column included).
func at(p generic.Position) string {
	if p.Page == 0 {
		return "-"
	}
	return fmt.Sprintf("p%d l%d c%d-%d", p.Page, p.Line, p.Col, p.Col+max(p.Len, 1)-1)
}
