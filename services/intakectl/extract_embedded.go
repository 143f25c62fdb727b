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
	a, err := embedded.Run(ctx, set, data, embedded.Limits{}, opts)
	if output == "debug" {
		if a.Unreadable != nil {
			fmt.Fprintf(env.Stdout, "== %s: attachments not readable (%v); reading the text\n", path, a.Unreadable)
		}
		if a.Found != nil {
			for _, n := range a.Found.Attachments {
				fmt.Fprintf(env.Stdout, "== %s: attachment %q: %s\n", path, n.File, n.Result)
			}
		}
	}
	if err != nil || a.Run == nil {
		return nil, nil, err
	}
	d := a.Found.Document
	if output == "debug" {
		fmt.Fprintf(env.Stdout, "== %s: standard %s, profile %s, %s %s (type code %s)\n", path, d.Standard,
			orNone(d.Profile), strings.ReplaceAll(string(d.Kind), "_", " "), d.ID, d.TypeCode)
	}
	return a.Run, []string{d.Source()}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
