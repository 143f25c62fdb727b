package intakectl

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// `mailboxes test` and `mailboxes replay` talk to the mail server as the
// intake does (with pkg/mailbox, the intake's own reading code): the secrets
// are read from the mailbox's files or variables on this machine, so run
// them where the intake runs (or where the same files and variables exist).

// storedMailbox reads one mailbox from the table.
func storedMailbox(ctx context.Context, st *store.Store, id string) (mailbox.Mailbox, error) {
	c, err := st.MailboxConfig(ctx, id)
	if err != nil {
		return mailbox.Mailbox{}, err
	}
	return mailbox.DecodeMailbox(c.Config)
}

func runMailboxesTest(ctx context.Context, args []string, env Env) int {
	fs := newFlags("mailboxes test", env)
	file := fs.String("file", "", "test the entries of this YAML file instead of a stored mailbox")
	asJSON := fs.Bool("json", false, "print JSON")
	rest, ok := parseFlags(fs, args)
	if !ok || (len(rest) == 1) == (*file != "") || len(rest) > 1 {
		fmt.Fprintln(env.Stderr, "usage: intakectl mailboxes test ID | --file FILE [--json]")
		return 2
	}
	boxes, err := mailboxesToTest(ctx, env, rest, *file)
	if err != nil {
		return fail(env, "%v", err)
	}
	code := 0
	var reports []mailbox.CheckReport
	for _, mb := range boxes {
		rep, err := mailbox.Check(ctx, mb, env.Getenv)
		if err != nil {
			// The error names the server and the login, never the secret.
			fmt.Fprintf(env.Stderr, "intakectl: mailbox %s: %v\n", mb.ID, err)
			code = 1
			continue
		}
		if !rep.OK() {
			code = 1
		}
		reports = append(reports, rep)
		if !*asJSON {
			printCheck(env, mb, rep)
		}
	}
	if *asJSON {
		if c := printJSON(env, reports); c != 0 {
			return c
		}
	}
	return code
}

func mailboxesToTest(ctx context.Context, env Env, ids []string, file string) ([]mailbox.Mailbox, error) {
	if file != "" {
		return mailbox.LoadMailboxes(file)
	}
	st, err := openStore(ctx, env)
	if err != nil {
		return nil, err
	}
	defer st.Pool().Close()
	mb, err := storedMailbox(ctx, st, ids[0])
	return []mailbox.Mailbox{mb}, err
}

func printCheck(env Env, mb mailbox.Mailbox, rep mailbox.CheckReport) {
	fmt.Fprintf(env.Stdout, "mailbox %s: logged in to %s as %s\n", mb.ID, rep.Server, rep.Username)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tFOLDER\tEXISTS\tMAILS\tUNSEEN")
	for _, f := range rep.Folders {
		if !f.Exists {
			note := "no (made at the first pass)"
			if f.Role == "folder" {
				note = "NO: the intake cannot read it"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\n", f.Role, f.Name, note)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\tyes\t%d\t%d\n", f.Role, f.Name, f.Messages, f.Unseen)
	}
	_ = tw.Flush()
}

// folderFlags collects repeated --folder.
type folderFlags []string

func (f *folderFlags) String() string { return strings.Join(*f, ",") }

func (f *folderFlags) Set(v string) error { *f = append(*f, v); return nil }

func runMailboxesReplay(ctx context.Context, args []string, env Env) int {
	fs := newFlags("mailboxes replay", env)
	since := fs.String("since", "", "first day of mail to replay (YYYY-MM-DD, the server's arrival date)")
	until := fs.String("until", "", "last day of mail to replay, included (default: --since)")
	var folders folderFlags
	fs.Var(&folders, "folder", "folder to read, repeatable (default: the processed folder, then the error folder)")
	dry := fs.Bool("dry-run", false, "list the documents that would be made; submit and move nothing")
	asJSON := fs.Bool("json", false, "print JSON")
	rest, ok := parseFlags(fs, args)
	if !ok || len(rest) != 1 || *since == "" {
		fmt.Fprintln(env.Stderr, "usage: intakectl mailboxes replay ID --since YYYY-MM-DD [--until YYYY-MM-DD] [--folder F ...] [--dry-run] [--json]")
		return 2
	}
	opt := mailbox.ReplayOptions{Folders: folders, DryRun: *dry}
	var err error
	if opt.Since, opt.Until, err = replayDays(*since, *until); err != nil {
		fmt.Fprintf(env.Stderr, "intakectl mailboxes replay: %v\n", err)
		return 2
	}
	rep, err := replay(ctx, env, rest[0], opt)
	if *asJSON {
		if c := printJSON(env, rep); c != 0 {
			return c
		}
	} else {
		printReplay(env, rep, opt)
	}
	if err != nil {
		return fail(env, "%v (what was done is above; replaying again is safe)", err)
	}
	return 0
}

func replayDays(since, until string) (from, to time.Time, err error) {
	if from, err = time.Parse(time.DateOnly, since); err != nil {
		return from, to, fmt.Errorf("--since: %w", err)
	}
	if until == "" {
		return from, from, nil
	}
	if to, err = time.Parse(time.DateOnly, until); err != nil {
		return from, to, fmt.Errorf("--until: %w", err)
	}
	if to.Before(from) {
		return from, to, fmt.Errorf("--until %s is before --since %s", until, since)
	}
	return from, to, nil
}

// replay connects what intake needs (the store, the object store, the
// templates' names) and replays mailbox id.
func replay(ctx context.Context, env Env, id string, opt mailbox.ReplayOptions) (mailbox.ReplayReport, error) {
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return mailbox.ReplayReport{}, err
	}
	st, err := openStore(ctx, env)
	if err != nil {
		return mailbox.ReplayReport{}, err
	}
	defer st.Pool().Close()
	mb, err := storedMailbox(ctx, st, id)
	if err != nil {
		return mailbox.ReplayReport{}, err
	}
	objs, err := openObjects(cfg)
	if err != nil {
		return mailbox.ReplayReport{}, err
	}
	cat, err := catalogue.Open(ctx, st, zap.NewNop(), catalogue.Options{Recheck: -1, NamesOnly: true})
	if err != nil {
		return mailbox.ReplayReport{}, err
	}
	defer cat.Close()
	in := &intake.Service{Store: st, Objects: objs, Templates: cat, SubjectPrefix: cfg.SubjectPrefix}
	return mailbox.Replay(ctx, mailbox.Deps{Store: st, Intake: in, Logger: zap.NewNop(), Getenv: env.Getenv,
		Tuning: mailbox.Tuning{MaxPDFBytes: cfg.MaxUploadBytes}}, mb, opt)
}

// openObjects opens the object store the services use: S3 (INTAKE_S3_*),
// or standalone's file store under INTAKE_DATA_DIR.
func openObjects(cfg config.Config) (objectstore.Store, error) {
	if cfg.S3.Endpoint != "" {
		return objectstore.NewS3(objectstore.S3Config{Endpoint: cfg.S3.Endpoint, Region: cfg.S3.Region, Bucket: cfg.S3.Bucket,
			AccessKey: cfg.S3.AccessKey, SecretKey: cfg.S3.SecretKey, PathStyle: cfg.S3.PathStyle})
	}
	return objectstore.NewFS(filepath.Join(cfg.DataDir, "objects"))
}

func printReplay(env Env, rep mailbox.ReplayReport, opt mailbox.ReplayOptions) {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FOLDER\tARRIVED\tMESSAGE-ID\tMADE\tRECORDED\tREFUSED\tNOTE")
	for _, m := range rep.Mails {
		note := m.Problem
		if m.MovedTo != "" {
			note = "moved to " + m.MovedTo
		}
		if len(m.Refused) > 0 {
			note = strings.Join(m.Refused, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", m.Folder, m.Arrived.UTC().Format(time.RFC3339), m.MessageID,
			len(m.Created), len(m.Existing), len(m.Refused), truncate(dash(note), 120))
	}
	_ = tw.Flush()
	made := "documents made"
	if opt.DryRun {
		made = "documents to make (dry run)"
	}
	fmt.Fprintf(env.Stdout, "%d mails of %s to %s: %d %s, %d already recorded (skipped), %d refused, %d mails without documents, %d moved to the processed folder\n",
		len(rep.Mails), opt.Since.Format(time.DateOnly), opt.Until.Format(time.DateOnly), rep.Created, made, rep.Existing,
		rep.Refused, rep.WithoutDocuments, rep.MovedMail)
	for _, f := range rep.MissingFolders {
		fmt.Fprintf(env.Stdout, "folder %q does not exist\n", f)
	}
}
