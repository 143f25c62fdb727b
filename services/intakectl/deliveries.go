package intakectl

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/store"
)

func init() {
	register("deliveries", "show a document's webhook deliveries and every attempt: deliveries LOG_ID", runDeliveries)
	register("redeliver", "send results again under a new webhook-id: redeliver LOG_ID | --client ID --since TIME | --state finished_with_failure", runRedeliver)
}

func runDeliveries(ctx context.Context, args []string, env Env) int {
	fs := newFlags("deliveries", env)
	rest, ok := parseFlags(fs, args)
	if !ok {
		return 2
	}
	if len(rest) != 1 {
		fmt.Fprintln(env.Stderr, "usage: intakectl deliveries LOG_ID")
		return 2
	}
	st, err := openStore(ctx, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer st.Pool().Close()
	doc, err := st.DocumentByLogIDAnyClient(ctx, rest[0])
	if err != nil {
		return fail(env, "%v", err)
	}
	dels, err := st.Deliveries(ctx, doc.ID)
	if err != nil {
		return fail(env, "%v", err)
	}
	fmt.Fprintf(env.Stdout, "document %s  client %s  state %s\n", doc.LogID, doc.ClientID, doc.State)
	if len(dels) == 0 {
		fmt.Fprintln(env.Stdout, "no deliveries")
		return 0
	}
	for _, dv := range dels {
		fmt.Fprintf(env.Stdout, "\ndelivery %s  status %s (state %s)  %s  attempts %d  created %s",
			dv.ID, dv.Status, dv.State, dv.Outcome, dv.Attempts, dv.CreatedAt.UTC().Format(time.RFC3339))
		if dv.Outcome == store.DeliveryPending && dv.NextAttemptAt != nil {
			fmt.Fprintf(env.Stdout, "  next %s", dv.NextAttemptAt.UTC().Format(time.RFC3339))
		}
		if dv.RedeliveryOf != "" {
			fmt.Fprintf(env.Stdout, "  redelivery of %s", dv.RedeliveryOf)
		}
		fmt.Fprintln(env.Stdout)
		atts, err := st.DeliveryAttempts(ctx, dv.ID)
		if err != nil {
			return fail(env, "%v", err)
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tTIME\tCODE\tLATENCY\tERROR\tBODY")
		for _, a := range atts {
			code := "-"
			if a.StatusCode != 0 {
				code = fmt.Sprint(a.StatusCode)
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%q\n", a.N, a.At.UTC().Format(time.RFC3339Nano), code,
				a.Latency.Round(time.Millisecond), a.Error, truncate(a.BodyPrefix, 120))
		}
		_ = tw.Flush()
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// maxRedeliver bounds one bulk redelivery; run again for more.
const maxRedeliver = 10000

func runRedeliver(ctx context.Context, args []string, env Env) int {
	fs := newFlags("redeliver", env)
	client := fs.String("client", "", "redeliver this client's documents (with --since)")
	since := fs.String("since", "", "documents updated at or after this time (RFC 3339 or YYYY-MM-DD)")
	state := fs.String("state", "", "documents in this state, e.g. finished_with_failure")
	rest, ok := parseFlags(fs, args)
	if !ok {
		return 2
	}
	bulk := *client != "" || *since != "" || *state != ""
	if (len(rest) == 1) == bulk || len(rest) > 1 {
		fmt.Fprintln(env.Stderr, "usage: intakectl redeliver LOG_ID | --client ID --since TIME | --state finished_with_failure")
		return 2
	}
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return fail(env, "%v", err)
	}
	st, err := openStore(ctx, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer st.Pool().Close()

	var docs []document.Document
	if !bulk {
		doc, err := st.DocumentByLogIDAnyClient(ctx, rest[0])
		if err != nil {
			return fail(env, "%v", err)
		}
		docs = append(docs, doc)
	} else {
		f := store.DocumentsFilter{ClientID: *client}
		if *since != "" {
			if f.Since, err = parseSince(*since); err != nil {
				return fail(env, "--since: %v", err)
			}
		}
		if *state != "" {
			if f.State, err = document.ParseState(*state); err != nil {
				return fail(env, "--state: %v", err)
			}
		}
		if docs, err = st.FindDocuments(ctx, f, maxRedeliver); err != nil {
			return fail(env, "%v", err)
		}
	}
	n := 0
	for _, doc := range docs {
		id, err := lifecycle.Redeliver(ctx, st, cfg.SubjectPrefix, doc, "operator:intakectl")
		if err != nil {
			if !bulk {
				return fail(env, "%v", err)
			}
			fmt.Fprintf(env.Stderr, "intakectl: skip %s: %v\n", doc.LogID, err)
			continue
		}
		fmt.Fprintf(env.Stdout, "%s\t%s\n", doc.LogID, id)
		n++
	}
	fmt.Fprintf(env.Stderr, "%d deliveries queued (the dispatcher's outbox relay publishes them)\n", n)
	return 0
}

func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, s)
}
