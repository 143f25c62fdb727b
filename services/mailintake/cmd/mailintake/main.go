// Command mailintake runs docintake's mailbox intake as its own process:
// the mailboxes of the mailboxes table (INTAKE_MAILBOXES_FILE is applied to
// it at start), read over IMAP or Microsoft Graph.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/system"
	"github.com/docintake/docintake/services/mailintake"
)

func main() {
	// Unless GOGC/GOMEMLIMIT say otherwise: a larger GC target with a soft
	// memory limit (see system.DefaultGC).
	system.DefaultGC(os.Getenv)
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mailintake:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, _ []string, getenv func(string) string, _ io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := system.Open(ctx, "mailintake", getenv, system.OpenOptions{})
	if err != nil {
		return err
	}
	defer p.Close()
	// The file is applied to the mailboxes table (as the clients file is to
	// clients); the pollers follow the table, which intakectl edits too.
	if f := p.Config.MailboxesFile; f != "" {
		boxes, err := mailbox.LoadMailboxes(f)
		if err != nil {
			return err
		}
		if err := mailbox.ApplyMailboxes(ctx, p.Store, boxes); err != nil {
			return err
		}
	}
	cat, err := catalogue.Open(ctx, p.Store, p.Logger.Named("templates"),
		// Intake only resolves names and party ids: nothing to compile.
		catalogue.Options{Dirs: []string{p.Config.TemplatesDir}, NamesOnly: true})
	if err != nil {
		return err
	}
	defer cat.Close()
	in := &intake.Service{Store: p.Store, Objects: p.Objects, Templates: cat, SubjectPrefix: p.Config.SubjectPrefix,
		Logger: p.Logger.Named("intake")}
	return p.ServeWorker(ctx, func(ctx context.Context) error {
		return mailintake.Run(ctx, mailintake.Deps{Load: mailintake.StoredMailboxes(p.Store), Store: p.Store, Intake: in,
			Logger: p.Logger, Registry: p.Registry, Getenv: getenv, Tuning: mailintake.Tuning{Read: mailbox.Tuning{MaxPDFBytes: p.Config.MaxUploadBytes}}})
	})
}
