package intakectl

import (
	"context"
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/store"
)

func init() {
	register("reprocess", "run documents again with the current template version: reprocess LOG_ID... | --client ID [--template NAME] [--state S] [--since TIME]", runReprocess)
}

// maxReprocess bounds one bulk reprocess (run it again for more).
const maxReprocess = 100000

func runReprocess(ctx context.Context, args []string, env Env) int {
	fs := newFlags("reprocess", env)
	client := fs.String("client", "", "reprocess this client's documents")
	tmpl := fs.String("template", "", "only documents of this template")
	var states stringsFlag
	fs.Var(&states, "state", "only documents in this state (repeatable; default: finished_rejected, finished_with_failure and dlq)")
	since := fs.String("since", "", "documents updated at or after this time (RFC 3339 or YYYY-MM-DD)")
	logIDs, ok := parseFlags(fs, args)
	if !ok {
		return 2
	}
	bulk := *client != ""
	if (len(logIDs) > 0) == bulk || (!bulk && (*tmpl != "" || len(states) > 0 || *since != "")) {
		fmt.Fprintln(env.Stderr, "usage: intakectl reprocess LOG_ID... | --client ID [--template NAME] [--state S]... [--since TIME]")
		return 2
	}
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return fail(env, "%v", err)
	}
	return withStore(ctx, env, func(st *store.Store) int {
		var docs []document.Document
		if bulk {
			f := store.ReprocessFilter{ClientID: *client, Template: *tmpl}
			for _, s := range states {
				state, err := document.ParseState(s)
				if err != nil {
					return fail(env, "--state: %v", err)
				}
				f.States = append(f.States, state)
			}
			if len(f.States) == 0 {
				f.States = document.StatesWhere(document.State.RetriedByDefault)
			}
			if *since != "" {
				if f.Since, err = parseSince(*since); err != nil {
					return fail(env, "--since: %v", err)
				}
			}
			if docs, err = st.FindForReprocess(ctx, f, maxReprocess); err != nil {
				return fail(env, "%v", err)
			}
		} else {
			for _, id := range logIDs {
				d, err := st.DocumentByLogIDAnyClient(ctx, id)
				if err != nil {
					return fail(env, "%s: %v", id, err)
				}
				docs = append(docs, d)
			}
		}
		who := "operator:" + strings.TrimPrefix(pusher(env), "intakectl:")
		// The same progress display as upload: a bar on a terminal, one
		// line per document otherwise.
		bar := newProgress(env, len(docs))
		bar.phase("reprocess")
		code, n := 0, 0
		for _, d := range docs {
			if _, err := lifecycle.Reprocess(ctx, st, cfg.SubjectPrefix, d, who); err != nil {
				fmt.Fprintf(env.Stderr, "intakectl: %s: %v\n", d.LogID, err)
				bar.done("", true)
				code = 1
			} else {
				n++
				bar.done(d.LogID+": reprocessing", false)
			}
		}
		bar.finish()
		if n > 0 {
			publishOutbox(ctx, env, cfg, st)
		}
		fmt.Fprintf(env.Stderr, "%d of %d document(s) reprocessing with the current template version\n", n, len(docs))
		return code
	})
}
