package intakectl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/template"
)

// structuredRun is extract's look into a PDF's attachments, as the
// processor does it: when the PDF carries a recognised business document
// and the template reads attachments, the template runs on it and the
// "engine" reported is the document's source. A nil run (and nil error)
// means: read the text. --output debug lists every attachment and what it
// was; --output text always shows the printed text.
func structuredRun(ctx context.Context, env Env, path string, set *template.Set, opts template.RunOptions, output string) (*template.Run, []string, error) {
	if output == "text" || set == nil || strings.EqualFold(filepath.Ext(path), ".txt") || !set.ReadsEmbedded(opts) {
		return nil, nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	found, err := embedded.Find(ctx, data, embedded.Limits{})
	if err != nil {
		if output == "debug" {
			fmt.Fprintf(env.Stdout, "== %s: attachments not readable (%v); reading the text\n", path, err)
		}
		return nil, nil, nil
	}
	if output == "debug" {
		for _, n := range found.Attachments {
			fmt.Fprintf(env.Stdout, "== %s: attachment %q: %s\n", path, n.File, n.Result)
		}
	}
	d := found.Document
	if d == nil {
		return nil, nil, nil
	}
	run, err := set.RunStructured(ctx, d.Structured(), opts)
	if err != nil || run == nil {
		return nil, nil, err
	}
	if output == "debug" {
		fmt.Fprintf(env.Stdout, "== %s: standard %s, profile %s, %s %s (type code %s)\n", path, d.Standard,
			orNone(d.Profile), strings.ReplaceAll(string(d.Kind), "_", " "), d.ID, d.TypeCode)
	}
	return run, []string{d.Source()}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
