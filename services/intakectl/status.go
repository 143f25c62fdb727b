package intakectl

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/store"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func init() {
	register("status", "documents by state, queue depth and oldest age per consumer, backlog, DLQ, mailboxes: status [--dlq N] [--json]", runStatus)
}

// statusQueue is one consumer's line of `intakectl status`.
type statusQueue struct {
	Consumer      string  `json:"consumer"`
	Pending       uint64  `json:"pending"`
	OldestSeconds float64 `json:"oldest_pending_seconds"`
	AckPending    int     `json:"ack_pending"`
	Redelivered   int     `json:"redelivered"`
	Waiting       int     `json:"waiting_pulls"`
	Error         string  `json:"error,omitempty"`
}

type statusDLQ struct {
	LogID     string    `json:"log_id"`
	Client    string    `json:"client"`
	Template  string    `json:"template"`
	Reason    string    `json:"reason,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	Attempts  int       `json:"attempts"`
	Since     time.Time `json:"since"`
}

// statusReport is the --json form; the table prints the same fields.
type statusReport struct {
	States                map[string]int `json:"states"`
	Queues                []statusQueue  `json:"queues"`
	OldestReceivedSeconds float64        `json:"oldest_received_seconds"`
	OutboxUnsent          int            `json:"outbox_unsent"`
	OutboxOldestSeconds   float64        `json:"outbox_oldest_seconds"`
	DeliveriesPending     int            `json:"deliveries_pending"`
	DeliveriesRetrying    int            `json:"deliveries_retrying"`
	DisabledEndpoints     int            `json:"disabled_endpoints"`
	// Orphaned source objects removed by the processors (uploads killed
	// before their commit), in all and in the last 24 hours.
	OrphansRemoved        int         `json:"orphans_removed"`
	OrphansRemovedLastDay int         `json:"orphans_removed_last_day"`
	DLQ                   []statusDLQ `json:"dlq"`
	// The mail intake's mailboxes (mailboxes_status.go).
	Mailboxes []statusMailbox `json:"mailboxes"`
}

func runStatus(ctx context.Context, args []string, env Env) int {
	fs := newFlags("status", env)
	dlqN := fs.Int("dlq", 10, "DLQ entries to list (newest first)")
	asJSON := fs.Bool("json", false, "print JSON instead of tables")
	if rest, ok := parseFlags(fs, args); !ok || len(rest) > 0 {
		fmt.Fprintln(env.Stderr, "usage: intakectl status [--dlq N] [--json]")
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
	sum, err := st.OpsSummary(ctx)
	if err != nil {
		return fail(env, "%v", err)
	}
	dlq, err := st.OpsDocuments(ctx, document.StateDLQ, max(*dlqN, 0))
	if err != nil {
		return fail(env, "%v", err)
	}
	rep := report(sum, dlq)
	orphans, err := st.OrphansRemoved(ctx)
	if err != nil {
		return fail(env, "%v", err)
	}
	rep.OrphansRemoved, rep.OrphansRemovedLastDay = orphans.Total, orphans.LastDay
	if rep.Mailboxes, err = mailboxStatus(ctx, st); err != nil {
		return fail(env, "%v", err)
	}
	rep.Queues = consumerStatus(ctx, cfg)

	code := 0
	for _, q := range rep.Queues {
		if q.Error != "" {
			code = 1 // the numbers shown are still right; the queue part is missing
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fail(env, "%v", err)
		}
		return code
	}
	printStatus(env, rep, sum.States[document.StateDLQ])
	printMailboxes(env, rep.Mailboxes)
	return code
}

func report(sum store.OpsSummary, dlq []store.OpsDocument) statusReport {
	age := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return max(sum.At.Sub(t).Seconds(), 0)
	}
	rep := statusReport{States: map[string]int{}, OldestReceivedSeconds: age(sum.OldestReceived),
		OutboxUnsent: sum.OutboxUnsent, OutboxOldestSeconds: age(sum.OutboxOldest),
		DeliveriesPending: sum.Deliveries.Pending, DeliveriesRetrying: sum.Deliveries.Retries,
		DisabledEndpoints: sum.Deliveries.DisabledClients, DLQ: []statusDLQ{}}
	for _, s := range document.States {
		if s != document.StateUnknown {
			rep.States[string(s)] = sum.States[s]
		}
	}
	for _, d := range dlq {
		rep.DLQ = append(rep.DLQ, statusDLQ{LogID: d.LogID, Client: d.ClientID, Template: d.Template,
			Reason: string(d.StatusReason), LastError: d.LastError, Attempts: d.Attempts, Since: d.UpdatedAt.UTC()})
	}
	return rep
}

// consumerStatus reads the consumers without declaring anything: status
// must not create or change streams.
func consumerStatus(ctx context.Context, cfg config.Config) []statusQueue {
	qcfg := cfg.Queue()
	names := []string{qcfg.Processor.Durable, qcfg.Dispatcher.Durable}
	out := make([]statusQueue, len(names))
	for i, n := range names {
		out[i].Consumer = n
	}
	nc, err := nats.Connect(cfg.NATSURL, nats.Name("intakectl-status"), nats.Timeout(5*time.Second))
	if err != nil {
		for i := range out {
			out[i].Error = fmt.Sprintf("connect %s: %v", cfg.NATSURL, err)
		}
		return out
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		for i := range out {
			out[i].Error = err.Error()
		}
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for i := range out {
		q := &out[i]
		s, err := queue.Stats(ctx, js, qcfg.Stream, q.Consumer)
		if err != nil {
			q.Error = err.Error()
			continue
		}
		q.Pending, q.AckPending, q.Redelivered, q.Waiting = s.Pending, s.AckPending, s.Redelivered, s.Waiting
		if at, ok, err := queue.OldestPending(ctx, js, qcfg.Stream, q.Consumer); err != nil {
			q.Error = err.Error()
		} else if ok {
			q.OldestSeconds = max(time.Since(at).Seconds(), 0)
		}
	}
	return out
}

func printStatus(env Env, rep statusReport, dlqTotal int) {
	secs := func(s float64) string {
		if s <= 0 {
			return "-"
		}
		return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tDOCUMENTS")
	for _, s := range document.States {
		if s != document.StateUnknown {
			fmt.Fprintf(tw, "%s\t%d\n", s, rep.States[string(s)])
		}
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CONSUMER\tPENDING\tOLDEST PENDING\tACK PENDING\tREDELIVERED\tWAITING PULLS")
	for _, q := range rep.Queues {
		if q.Error != "" {
			fmt.Fprintf(tw, "%s\tunavailable: %s\n", q.Consumer, q.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\n", q.Consumer, q.Pending, secs(q.OldestSeconds), q.AckPending, q.Redelivered, q.Waiting)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "oldest document in received\t%s\n", secs(rep.OldestReceivedSeconds))
	fmt.Fprintf(tw, "outbox rows not yet published\t%d (oldest %s)\n", rep.OutboxUnsent, secs(rep.OutboxOldestSeconds))
	fmt.Fprintf(tw, "webhook deliveries pending\t%d (%d retrying)\n", rep.DeliveriesPending, rep.DeliveriesRetrying)
	fmt.Fprintf(tw, "clients with disabled webhook\t%d\n", rep.DisabledEndpoints)
	fmt.Fprintf(tw, "orphaned source objects removed\t%d (%d in the last 24h)\n", rep.OrphansRemoved, rep.OrphansRemovedLastDay)
	_ = tw.Flush()

	fmt.Fprintf(env.Stdout, "\nDLQ: %d documents", dlqTotal)
	if len(rep.DLQ) < dlqTotal {
		fmt.Fprintf(env.Stdout, " (newest %d shown)", len(rep.DLQ))
	}
	fmt.Fprintln(env.Stdout)
	if len(rep.DLQ) == 0 {
		return
	}
	tw = tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOG_ID\tCLIENT\tTEMPLATE\tREASON\tATTEMPTS\tSINCE\tLAST ERROR")
	for _, d := range rep.DLQ {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", d.LogID, d.Client, d.Template, dash(d.Reason), d.Attempts,
			d.Since.Format(time.RFC3339), truncate(dash(d.LastError), 100))
	}
	_ = tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
