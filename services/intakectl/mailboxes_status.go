package intakectl

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/store"
)

// statusMailbox is one mailbox's line of `intakectl status`: its health as
// its poller last recorded it (mailbox_health) and the last day's counts.
type statusMailbox struct {
	ID                   string    `json:"id"`
	Client               string    `json:"client"`
	Health               string    `json:"health"` // ok, failing, stale, never
	Reader               string    `json:"reader,omitempty"`
	LastPassAt           time.Time `json:"last_pass_at,omitzero"`
	LastSuccessAt        time.Time `json:"last_success_at,omitzero"`
	FailedPasses         int       `json:"failed_passes"`
	LastError            string    `json:"last_error,omitempty"`
	Unprocessed          int       `json:"unprocessed"`
	OldestUnprocessedAge float64   `json:"oldest_unprocessed_seconds"`
	MailsSeen            int       `json:"mails_seen_24h"`
	MailsProcessed       int       `json:"mails_processed_24h"`
	MailsFailed          int       `json:"mails_failed_24h"`
	MailsRetrying        int       `json:"mails_retrying_24h"`
	DocumentsCreated     int       `json:"documents_created_24h"`
}

func mailboxStatus(ctx context.Context, st *store.Store) ([]statusMailbox, error) {
	all, err := st.MailboxStatuses(ctx, nil, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	out := make([]statusMailbox, 0, len(all))
	for _, m := range all {
		s := statusMailbox{ID: m.MailboxID, Client: m.ClientID, Health: m.Health(), Reader: m.Reader, LastPassAt: m.LastPassAt.UTC(),
			LastSuccessAt: m.LastSuccessAt.UTC(), FailedPasses: m.FailedPasses, LastError: m.LastError, Unprocessed: m.Unprocessed,
			MailsSeen: m.Seen, MailsProcessed: m.Processed, MailsFailed: m.Failed, MailsRetrying: m.Retrying,
			DocumentsCreated: m.DocumentsCreated}
		if !m.OldestUnprocessed.IsZero() {
			s.OldestUnprocessedAge = max(m.At.Sub(m.OldestUnprocessed).Seconds(), 0)
		}
		out = append(out, s)
	}
	return out, nil
}

func printMailboxes(env Env, boxes []statusMailbox) {
	if len(boxes) == 0 {
		return
	}
	fmt.Fprintln(env.Stdout)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MAILBOX\tCLIENT\tHEALTH\tLAST SUCCESS\tUNPROCESSED\tOLDEST\tMAILS 24H (processed/failed/retrying)\tDOCUMENTS 24H\tLAST ERROR")
	for _, m := range boxes {
		last := "-"
		if !m.LastSuccessAt.IsZero() {
			last = m.LastSuccessAt.Format(time.RFC3339)
		}
		oldest := "-"
		if m.OldestUnprocessedAge > 0 {
			oldest = time.Duration(m.OldestUnprocessedAge * float64(time.Second)).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d (%d/%d/%d)\t%d\t%s\n", m.ID, m.Client, m.Health, last, m.Unprocessed, oldest,
			m.MailsSeen, m.MailsProcessed, m.MailsFailed, m.MailsRetrying, m.DocumentsCreated, truncate(dash(m.LastError), 80))
	}
	_ = tw.Flush()
}
