package intakectl

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/config/pdfopts"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/template/draft"
)

// Learning from a review (issue 27; lifecycle/learn*.go): review sample,
// review draft, review map and review unit.

const learnUsage = `       intakectl review sample LOG_ID [--as NAME]
       intakectl review draft LOG_ID [--out FILE] [--name N] [--party-id ID] [--order FILE.json] [--force]
       intakectl review map LOG_ID --kind KIND --key KEY --value VALUE [--as NAME]
       intakectl review unit LOG_ID --unit UNIT --code CODE [--factor N] [--article A] [--as NAME]`

// learnCommands are review's subcommands that learn from a document.
var learnCommands = map[string]func(ctx context.Context, args []string, env Env) int{
	"sample": reviewSample, "draft": reviewDraft, "map": reviewMap, "unit": reviewUnit} // review_unit.go

// learnFlags parses a learn command's flags and its one LOG_ID argument;
// as names the operator.
func learnFlags(fs *flag.FlagSet, args []string, env Env) (logID, who string, ok bool) {
	as := fs.String("as", cmp.Or(env.Getenv("USER"), "unknown"), "operator name recorded on the document's history")
	rest, ok := parseFlags(fs, args)
	if !ok || len(rest) != 1 {
		fmt.Fprintln(env.Stderr, "usage: "+learnUsage[7:])
		return "", "", false
	}
	return rest[0], "operator:" + *as, true
}

// withLearn opens the store and the review actions, with samples read as
// the processor reads documents (INTAKE_PDF_*, INTAKE_TEMPLATE_BUDGET), and
// runs fn on logID's document.
func withLearn(ctx context.Context, env Env, logID string, fn func(ctx context.Context, r lifecycle.Review, d document.Document) int) int {
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return fail(env, "%v", err)
	}
	ctx = template.WithBudget(ctx, cfg.TemplateBudget)
	return withStore(ctx, env, func(st *store.Store) int {
		r, d, closeFn, code := documentReview(ctx, env, st, logID)
		if code != 0 {
			return code
		}
		defer closeFn()
		opts := pdfopts.Options(cfg)
		text := &catalogue.SampleText{Options: &opts}
		defer func() { _ = text.Close() }()
		r.SampleText = text.Text
		return fn(ctx, r, d)
	})
}

// documentReview finds logID's document and opens the review actions;
// code is the exit code of a failure (printed), 0 otherwise.
func documentReview(ctx context.Context, env Env, st *store.Store, logID string) (lifecycle.Review, document.Document, func(), int) {
	d, err := st.DocumentByLogIDAnyClient(ctx, logID)
	if err != nil {
		return lifecycle.Review{}, d, nil, fail(env, "%s: %v", logID, err)
	}
	r, closeFn, err := openReview(ctx, env, st)
	if err != nil {
		return r, d, nil, fail(env, "%v", err)
	}
	return r, d, closeFn, 0
}

// reviewSample adds a reviewed document as a sample of its template.
func reviewSample(ctx context.Context, args []string, env Env) int {
	logID, who, ok := learnFlags(newFlags("review sample", env), args, env)
	if !ok {
		return 2
	}
	return withLearn(ctx, env, logID, func(ctx context.Context, r lifecycle.Review, d document.Document) int {
		a, err := r.AddSample(ctx, d, who)
		if err != nil {
			return fail(env, "%s: %v", logID, err)
		}
		scope := "global"
		if a.ClientID != "" {
			scope = "client " + a.ClientID
		}
		if a.Changed {
			fmt.Fprintf(env.Stdout, "%s: added as sample %s of template %s v%d (%s)\n", logID, a.Sample, a.Template, a.Version, scope)
		} else {
			fmt.Fprintf(env.Stdout, "%s: already sample %s of template %s v%d (%s); nothing stored\n", logID, a.Sample, a.Template, a.Version, scope)
		}
		for _, res := range a.Results {
			fmt.Fprintf(env.Stdout, "%s: %s\n", a.Template, res.Line())
		}
		if a.Forced {
			fmt.Fprintf(env.Stdout, "the template does not deliver every sample yet (stored as forced): fix it (templates pull, edit, templates test, templates push) or draft one (review draft %s)\n", logID)
		}
		return 0
	})
}

// reviewMap writes a mapping entry for a document's client.
func reviewMap(ctx context.Context, args []string, env Env) int {
	fs := newFlags("review map", env)
	kind := fs.String("kind", "", "mapping table (the template's docintake.mappings table, e.g. article)")
	key := fs.String("key", "", "the value printed on the order (e.g. the buyer's article number)")
	value := fs.String("value", "", "what it maps to (e.g. your article number)")
	logID, who, ok := learnFlags(fs, args, env)
	if !ok {
		return 2
	}
	return withLearn(ctx, env, logID, func(ctx context.Context, r lifecycle.Review, d document.Document) int {
		a, err := r.AddMapping(ctx, d, store.Mapping{Kind: *kind, Key: *key, Value: *value}, who)
		if err != nil {
			return fail(env, "%s: %v", logID, err)
		}
		was := ""
		if a.Replaced {
			was = fmt.Sprintf(" (was %q)", a.Previous)
		}
		fmt.Fprintf(env.Stdout, "mapping %s %q → %q added for client %s%s\n", *kind, *key, *value, d.ClientID, was)
		for _, x := range a.Retried {
			fmt.Fprintf(env.Stdout, "%s: waited for it; processed again now\n", x.LogID)
		}
		return 0
	})
}

// draftArgs are review draft's options.
type draftArgs struct {
	out, name, party, order *string
	force                   *bool
}

// reviewDraft drafts a template from a reviewed document.
func reviewDraft(ctx context.Context, args []string, env Env) int {
	fs := newFlags("review draft", env)
	a := draftArgs{out: fs.String("out", "", "template file to write, or a directory for NAME.yml; default: NAME.yml here"),
		name:  fs.String("name", "", "template name; default: the template the document was processed with"),
		party: fs.String("party-id", "", "party id; default: that template's first"),
		order: fs.String("order", "", "the corrected order (result JSON's order shape); default: the approved order"),
		force: fs.Bool("force", false, "overwrite an existing template file and samples folder")}
	logID, _, ok := learnFlags(fs, args, env)
	if !ok {
		return 2
	}
	var truth *resultjson.Order
	if *a.order != "" {
		truth = &resultjson.Order{}
		b, err := os.ReadFile(*a.order)
		if err == nil {
			err = json.Unmarshal(b, truth)
		}
		if err != nil {
			return fail(env, "--order %s: %v", *a.order, err)
		}
	}
	return withLearn(ctx, env, logID, func(ctx context.Context, r lifecycle.Review, d document.Document) int {
		dr, err := r.Draft(ctx, d, truth, draft.Options{Name: *a.name, PartyID: *a.party})
		if err != nil {
			return fail(env, "%s: %v", logID, err)
		}
		return writeReviewDraft(env, dr, *a.out, *a.force)
	})
}

// writeReviewDraft writes the draft as NAME.yml with NAME.samples/, prints
// the report on stderr and the draft's test on stdout: exit 1 when the
// draft does not deliver the confirmed order (the files are written).
func writeReviewDraft(env Env, dr lifecycle.Drafted, out string, force bool) int {
	path := out
	if fi, err := os.Stat(path); path == "" || err == nil && fi.IsDir() {
		path = filepath.Join(path, dr.Name+".yml")
	}
	dir := catalogue.SamplesDir(path)
	if !force {
		for _, p := range []string{path, dir} {
			if _, err := os.Stat(p); err == nil {
				return fail(env, "review draft: %s exists (--force overwrites it)", p)
			} else if !errors.Is(err, os.ErrNotExist) {
				return fail(env, "review draft: %v", err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(env, "review draft: %v", err)
	}
	if err := os.WriteFile(path, dr.YAML, 0o644); err != nil {
		return fail(env, "review draft: %v", err)
	}
	for _, s := range dr.Samples {
		if err := os.WriteFile(filepath.Join(dir, s.Name), s.Content, 0o644); err != nil {
			return fail(env, "review draft: %v", err)
		}
	}
	fmt.Fprint(env.Stderr, dr.Report)
	fmt.Fprintf(env.Stderr, "wrote %s and %s/\n", path, dir)
	for _, res := range dr.Results {
		fmt.Fprintf(env.Stdout, "%s: %s\n", dr.Name, res.Line())
	}
	if !dr.Passed() {
		fmt.Fprintf(env.Stdout, "the draft does not deliver the confirmed order yet: edit %s, then intakectl templates test %s\n", path, path)
		return 1
	}
	return 0
}
