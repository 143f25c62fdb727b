package intakectl

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store"
)

// The mailboxes the mail intake reads live in PostgreSQL: INTAKE_MAILBOXES_FILE
// is upserted there at every start of the services, and these commands edit
// the same table; the pollers follow it within a poll interval (a minute).
// A mailbox removed here but still in the file comes back at the next start.

func init() {
	register("mailboxes", "mail intake mailboxes: add, list, test, remove, replay (a day of mail after an outage)", runMailboxes)
}

const mailboxesUsage = `usage: intakectl mailboxes add|list|test|remove|replay ...
  add --id ID --client C --host H [--port N] [--security tls|starttls|none] --username U
      (--password-file F | --password-env VAR) [--folder INBOX] [--processed-folder Processed]
      [--error-folder "Not processed"] [--sender ADDRESS_OR_DOMAIN=PARTY_ID ...]
  add --file FILE            every entry of FILE (INTAKE_MAILBOXES_FILE's shape)
  list [--json]
  test ID | --file FILE [--json]      log in and look at the folders; changes nothing
  remove ID
  replay ID --since YYYY-MM-DD [--until YYYY-MM-DD] [--folder F ...] [--dry-run] [--json]`

func runMailboxes(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, mailboxesUsage)
		return 2
	}
	switch args[0] {
	case "add":
		return runMailboxesAdd(ctx, args[1:], env)
	case "list":
		return runMailboxesList(ctx, args[1:], env)
	case "test":
		return runMailboxesTest(ctx, args[1:], env)
	case "remove":
		return runMailboxesRemove(ctx, args[1:], env)
	case "replay":
		return runMailboxesReplay(ctx, args[1:], env) // mailboxes_replay.go
	}
	fmt.Fprintf(env.Stderr, "intakectl mailboxes: unknown subcommand %q\n%s\n", args[0], mailboxesUsage)
	return 2
}

// senderFlags collects repeated --sender ADDRESS_OR_DOMAIN=PARTY_ID.
type senderFlags map[string]string

func (s senderFlags) String() string { return fmt.Sprint(map[string]string(s)) }

func (s senderFlags) Set(v string) error {
	k, party, ok := strings.Cut(v, "=")
	if !ok || k == "" || party == "" {
		return fmt.Errorf("%q is not ADDRESS_OR_DOMAIN=PARTY_ID", v)
	}
	s[k] = party
	return nil
}

// mailboxFlags declares add's flags and returns the mailbox they fill.
func mailboxFlags(fs *flag.FlagSet) *mailbox.Mailbox {
	mb := &mailbox.Mailbox{Senders: senderFlags{}}
	fs.StringVar(&mb.ID, "id", "", "mailbox id ([a-z0-9_.-]{1,64}): names its metrics and rows")
	fs.StringVar(&mb.Client, "client", "", "the client whose documents its PDFs become")
	fs.StringVar(&mb.IMAP.Host, "host", "", "IMAP server")
	fs.IntVar(&mb.IMAP.Port, "port", 0, "IMAP port (default 993 for tls, 143 otherwise)")
	fs.Func("security", "tls (default), starttls, or none (loopback only)", func(v string) error {
		mb.IMAP.Security = mailbox.Security(v)
		return nil
	})
	fs.StringVar(&mb.IMAP.Username, "username", "", "IMAP login")
	fs.StringVar(&mb.IMAP.PasswordFile, "password-file", "", "file holding the password, read at each login (on the machine running the intake)")
	fs.StringVar(&mb.IMAP.PasswordEnv, "password-env", "", "environment variable holding the password")
	fs.StringVar(&mb.Folder, "folder", "INBOX", "folder read")
	fs.StringVar(&mb.ProcessedFolder, "processed-folder", "Processed", "folder mails go to once their documents exist")
	fs.StringVar(&mb.ErrorFolder, "error-folder", "Not processed", "folder of mails that could not become documents")
	fs.Var(senderFlags(mb.Senders), "sender", "ADDRESS_OR_DOMAIN=PARTY_ID, repeatable: whose PDFs are read with that party's template")
	return mb
}

// mailboxesFrom reads --file's entries, or the mailbox of the flags.
func mailboxesFrom(file string, flagged *mailbox.Mailbox) ([]mailbox.Mailbox, error) {
	if file != "" {
		return mailbox.LoadMailboxes(file)
	}
	mb, err := mailbox.NormalizeMailbox(*flagged)
	if err != nil {
		return nil, fmt.Errorf("mailbox %q: %w", flagged.ID, err)
	}
	return []mailbox.Mailbox{mb}, nil
}

func runMailboxesAdd(ctx context.Context, args []string, env Env) int {
	fs := newFlags("mailboxes add", env)
	file := fs.String("file", "", "add every entry of this YAML file (INTAKE_MAILBOXES_FILE's shape) instead of the flags")
	flagged := mailboxFlags(fs)
	if rest, ok := parseFlags(fs, args); !ok || len(rest) > 0 {
		fmt.Fprintln(env.Stderr, mailboxesUsage)
		return 2
	}
	boxes, err := mailboxesFrom(*file, flagged)
	if err != nil {
		return fail(env, "%v", err)
	}
	return withStore(ctx, env, func(st *store.Store) int {
		for _, mb := range boxes {
			if err := mailbox.SaveMailbox(ctx, st, mb, store.MailboxFromCLI); err != nil {
				return fail(env, "%v", err)
			}
			fmt.Fprintf(env.Stdout, "mailbox %s (client %s) saved; the intake reads it within a minute. Check the login: intakectl mailboxes test %s\n",
				mb.ID, mb.Client, mb.ID)
		}
		return 0
	})
}

// mailboxRow is one line of `mailboxes list`.
type mailboxRow struct {
	ID        string `json:"id"`
	Client    string `json:"client"`
	Server    string `json:"server"`
	Username  string `json:"username"`
	Folder    string `json:"folder"`
	Senders   int    `json:"senders"`
	Source    string `json:"source"`
	Config    string `json:"config"`
	UpdatedAt string `json:"updated_at"`
	Error     string `json:"error,omitempty"`
}

func runMailboxesList(ctx context.Context, args []string, env Env) int {
	fs := newFlags("mailboxes list", env)
	asJSON := fs.Bool("json", false, "print JSON")
	if rest, ok := parseFlags(fs, args); !ok || len(rest) > 0 {
		fmt.Fprintln(env.Stderr, "usage: intakectl mailboxes list [--json]")
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int { return mailboxesList(ctx, env, st, *asJSON) })
}

func mailboxesList(ctx context.Context, env Env, st *store.Store, asJSON bool) int {
	cfgs, err := st.MailboxConfigs(ctx)
	if err != nil {
		return fail(env, "%v", err)
	}
	rows := make([]mailboxRow, 0, len(cfgs))
	for _, c := range cfgs {
		rows = append(rows, listRow(c))
	}
	if asJSON {
		return printJSON(env, rows)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCLIENT\tSERVER\tUSERNAME\tFOLDER\tSENDERS\tSOURCE\tUPDATED")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\tunreadable: %s\n", r.ID, r.Client, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Client, r.Server, r.Username, r.Folder, r.Senders, r.Source, r.UpdatedAt)
	}
	_ = tw.Flush()
	return 0
}

func listRow(c store.MailboxConfig) mailboxRow {
	r := mailboxRow{ID: c.ID, Client: c.ClientID, Source: c.Source, Config: c.Config, UpdatedAt: c.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z")}
	mb, err := mailbox.DecodeMailbox(c.Config)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Server, r.Username, r.Folder, r.Senders = mailboxServer(mb), mb.IMAP.Username, mb.Folder, len(mb.Senders)
	if mb.Graph != nil {
		r.Username = mb.Graph.User
	}
	return r
}

func mailboxServer(mb mailbox.Mailbox) string {
	if mb.Graph != nil {
		return "graph"
	}
	return fmt.Sprintf("%s:%d (%s)", mb.IMAP.Host, mb.IMAP.Port, mb.IMAP.Security)
}

func runMailboxesRemove(ctx context.Context, args []string, env Env) int {
	if len(args) != 1 {
		fmt.Fprintln(env.Stderr, "usage: intakectl mailboxes remove ID")
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int { return mailboxesRemove(ctx, env, st, args[0]) })
}

func mailboxesRemove(ctx context.Context, env Env, st *store.Store, id string) int {
	c, err := st.MailboxConfig(ctx, id)
	if err != nil {
		return fail(env, "%v", err)
	}
	if err := st.DeleteMailboxConfig(ctx, id); err != nil {
		return fail(env, "%v", err)
	}
	fmt.Fprintf(env.Stdout, "mailbox %s removed; its pollers stop within a minute (its position and mail records are kept)\n", id)
	if c.Source == store.MailboxFromFile {
		fmt.Fprintln(env.Stdout, "it came from INTAKE_MAILBOXES_FILE: remove it there too, or the next start adds it again")
	}
	return 0
}

func printJSON(env Env, v any) int {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fail(env, "%v", err)
	}
	return 0
}
