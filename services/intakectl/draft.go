package intakectl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/config/pdfopts"

	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template/draft"
)

const draftUsage = "usage: intakectl templates draft [--name NAME] [--party-id ID] [--out FILE] [--force] [--engine E] SAMPLE.pdf [MORE.pdf...]"

// runTemplatesDraft drafts a template from sample PDFs (package draft),
// writes it with a NAME.samples/ folder holding the samples and the JSON
// the draft reads from each (the template's regression baseline), and
// prints the draft's report on stderr.
func runTemplatesDraft(ctx context.Context, args []string, env Env) int {
	fs := newFlags("templates draft", env)
	name := fs.String("name", "", "template name (docintake.name); default: from the buyer's name in the letterhead")
	party := fs.String("party-id", "", "party id uploads will use (docintake.party_ids); default: the name upper-cased")
	out := fs.String("out", "", "template file to write, or a directory for NAME.yml; default: NAME.yml in the current directory")
	force := fs.Bool("force", false, "overwrite an existing template file and samples folder")
	engine := fs.String("engine", "auto", "text engine: auto, pdfium, pdftotext, ocr")
	files, ok := parseFlags(fs, args)
	if !ok {
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(env.Stderr, draftUsage)
		return 2
	}
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return fail(env, "%v", err)
	}
	// The samples' expected JSON is read as the processor will read orders.
	opts := pdfopts.Options(cfg)
	opts.Engine = *engine
	var eng pdftext.Engine
	defer func() {
		if eng != nil {
			_ = eng.Close()
		}
	}()
	samples := make([]draft.Sample, 0, len(files))
	for _, f := range files {
		in, err := readText(ctx, f, &eng, opts)
		if err != nil {
			return fail(env, "templates draft: %s: %v", f, err)
		}
		samples = append(samples, draft.Sample{Name: filepath.Base(f), Text: in.text})
	}
	d, err := draft.Build(ctx, samples, draft.Options{Name: *name, PartyID: *party})
	if err != nil {
		return fail(env, "templates draft: %v", err)
	}
	path := *out
	if fi, err := os.Stat(path); path == "" || err == nil && fi.IsDir() {
		path = filepath.Join(path, d.Name+".yml") // a directory: NAME.yml in it
	}
	dir := catalogue.SamplesDir(path)
	if !*force {
		for _, p := range []string{path, dir} {
			if _, err := os.Stat(p); err == nil {
				return fail(env, "templates draft: %s exists (--force overwrites it)", p)
			} else if !errors.Is(err, os.ErrNotExist) {
				return fail(env, "templates draft: %v", err)
			}
		}
	}
	if err := writeDraft(path, dir, files, d); err != nil {
		return fail(env, "templates draft: %v", err)
	}
	if err := d.WriteReport(env.Stderr); err != nil {
		return fail(env, "templates draft: %v", err)
	}
	fmt.Fprintf(env.Stderr, "wrote %s and %s/ (%d samples with their expected JSON)\n", path, dir, len(files))
	return 0
}

// writeDraft writes the template and NAME.samples/: each sample file and
// X.json, invoice2data's output the draft reads from it.
func writeDraft(path, dir string, files []string, d *draft.Draft) error {
	if p := filepath.Dir(path); p != "." {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, d.YAML, 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		base := filepath.Base(f)
		if err := os.WriteFile(filepath.Join(dir, base), data, 0o644); err != nil {
			return err
		}
		js := strings.TrimSuffix(base, filepath.Ext(base)) + ".json"
		if err := os.WriteFile(filepath.Join(dir, js), d.Outcomes[i].JSON, 0o644); err != nil {
			return err
		}
	}
	return nil
}
