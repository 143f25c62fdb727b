package intakectl

import (
	"cmp"
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

func init() {
	register("dlq", "documents in the dead-letter queue: dlq list | show LOG_ID | requeue LOG_ID | requeue --all | fail LOG_ID", runDLQ)
}

const dlqUsage = "usage: intakectl dlq list [--limit N] | show LOG_ID | requeue LOG_ID | requeue --all | fail LOG_ID  [--as NAME]"

func runDLQ(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, dlqUsage)
		return 2
	}
	fs := newFlags("dlq "+args[0], env)
	limit := fs.Int("limit", 100, "list at most this many documents")
	all := fs.Bool("all", false, "requeue every document in dlq")
	as := fs.String("as", cmp.Or(env.Getenv("USER"), "unknown"), "operator name recorded on the document's history")
	rest, ok := parseFlags(fs, args[1:])
	if !ok {
		return 2
	}
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return fail(env, "%v", err)
	}
	who := "operator:" + *as
	switch {
	case args[0] == "list" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int { return dlqList(ctx, env, st, *limit) })
	case args[0] == "show" && len(rest) == 1:
		return withStore(ctx, env, func(st *store.Store) int { return dlqShow(ctx, env, st, rest[0]) })
	case args[0] == "requeue" && (len(rest) == 1) != *all:
		return withStore(ctx, env, func(st *store.Store) int { return dlqRequeue(ctx, env, cfg, st, rest, who) })
	case args[0] == "fail" && len(rest) == 1:
		return withStore(ctx, env, func(st *store.Store) int {
			d, err := st.DocumentByLogIDAnyClient(ctx, rest[0])
			if err == nil {
				d, err = lifecycle.GiveUp(ctx, st, d, who)
			}
			if err != nil {
				return fail(env, "%s: %v", rest[0], err)
			}
			fmt.Fprintf(env.Stdout, "%s: %s (the client was told failed when it entered dlq)\n", d.LogID, d.State)
			return 0
		})
	}
	fmt.Fprintln(env.Stderr, dlqUsage)
	return 2
}

// withStore opens the store for one command and closes it afterwards.
func withStore(ctx context.Context, env Env, run func(st *store.Store) int) int {
	st, err := openStore(ctx, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer st.Pool().Close()
	return run(st)
}

func dlqList(ctx context.Context, env Env, st *store.Store, limit int) int {
	docs, err := st.DocumentsInState(ctx, document.StateDLQ, limit)
	if err != nil {
		return fail(env, "%v", err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOG_ID\tCLIENT\tTEMPLATE\tIN DLQ SINCE\tREASON\tLAST ERROR")
	for _, d := range docs {
		ev, err := st.Events(ctx, d.ID)
		if err != nil {
			return fail(env, "%v", err)
		}
		last := ""
		if len(ev) > 0 {
			last = oneLine(ev[len(ev)-1].Detail, 100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.LogID, d.ClientID, d.Template, d.UpdatedAt.UTC().Format(time.RFC3339),
			reasonText(d.StatusReason), last)
	}
	_ = tw.Flush()
	if len(docs) == limit {
		fmt.Fprintf(env.Stderr, "(first %d shown; --limit for more)\n", limit)
	}
	return 0
}

func dlqShow(ctx context.Context, env Env, st *store.Store, logID string) int {
	d, err := st.DocumentByLogIDAnyClient(ctx, logID)
	if err != nil {
		return fail(env, "%s: %v", logID, err)
	}
	pr, err := st.Processing(ctx, d.ID)
	if err != nil {
		return fail(env, "%v", err)
	}
	ev, err := st.Events(ctx, d.ID)
	if err != nil {
		return fail(env, "%v", err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"log_id", d.LogID}, {"client", d.ClientID}, {"message_id", d.MessageID}, {"filename", d.Filename},
		{"template", d.Template}, {"state", string(d.State)}, {"status_reason", reasonText(d.StatusReason)},
		{"source", d.SourcePath}, {"failures", fmt.Sprint(pr.Failures)}, {"deferrals", fmt.Sprint(pr.Deferrals)},
		{"process job", fmt.Sprint(pr.ProcessSeq)}, {"created", d.CreatedAt.UTC().Format(time.RFC3339)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
	}
	_ = tw.Flush()
	fmt.Fprintln(env.Stdout, "\nhistory:")
	for _, e := range ev {
		from := string(e.From)
		if from == "" {
			from = "(new)"
		}
		fmt.Fprintf(env.Stdout, "  %s  %s → %s  %s  %s\n", e.At.UTC().Format(time.RFC3339), from, e.To, e.Actor, reasonText(e.Reason))
		if e.Detail != "" {
			fmt.Fprintf(env.Stdout, "      %s\n", oneLine(e.Detail, 500))
		}
	}
	return 0
}

func dlqRequeue(ctx context.Context, env Env, cfg config.Config, st *store.Store, logIDs []string, who string) int {
	if len(logIDs) == 0 { // --all: everything in dlq now (bounded, to stay one screenful of work)
		docs, err := st.DocumentsInState(ctx, document.StateDLQ, 100000)
		if err != nil {
			return fail(env, "%v", err)
		}
		for _, d := range docs {
			logIDs = append(logIDs, d.LogID)
		}
	}
	code := 0
	n := 0
	for _, id := range logIDs {
		d, err := st.DocumentByLogIDAnyClient(ctx, id)
		if err == nil {
			_, err = lifecycle.Requeue(ctx, st, cfg.SubjectPrefix, d, who)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "intakectl: %s: %v\n", id, err)
			code = 1
			continue
		}
		n++
		fmt.Fprintf(env.Stdout, "%s: requeued\n", id)
	}
	if n > 0 {
		publishOutbox(ctx, env, cfg, st)
	}
	fmt.Fprintf(env.Stderr, "%d document(s) requeued\n", n)
	return code
}

// publishOutbox publishes the new jobs at once. The requeue is committed
// already: when NATS cannot be reached, the outbox relay of any running
// service claims them once they are its claim age old (2 s by default) and
// publishes them with its next poll, a few seconds later.
func publishOutbox(ctx context.Context, env Env, cfg config.Config, st *store.Store) {
	nc, err := nats.Connect(cfg.NATSURL, nats.Name("intakectl"), nats.Timeout(5*time.Second))
	if err != nil {
		fmt.Fprintf(env.Stderr, "note: NATS at %s not reachable (%v); a running service's relay will publish the jobs\n", cfg.NATSURL, err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintf(env.Stderr, "note: %v; a running service's relay will publish the jobs\n", err)
		return
	}
	qcfg := cfg.Queue()
	relay := queue.NewRelay(st, queue.NewPublisher(js, qcfg.Stream), zap.NewNop(), queue.RelayOptions{})
	fctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := relay.Flush(fctx); err != nil {
		fmt.Fprintf(env.Stderr, "note: publishing the jobs failed (%v); a running service's relay will retry\n", err)
	}
}

func reasonText(r document.Reason) string {
	if r == "" {
		return "-"
	}
	return r.WireValue()
}

// oneLine flattens s to one line of at most n bytes.
func oneLine(s string, n int) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' || r == '\t' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	str := string(out)
	if len(str) > n {
		str = str[:n] + "…"
	}
	return str
}
