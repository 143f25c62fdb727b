// Command devmailbox is the development mailbox of the README's quick
// start: a throwaway Dovecot IMAP server on loopback (as the tests start
// one), a mailboxes file for `make run` (INTAKE_MAILBOXES_FILE) naming it
// as the dev client's orders mailbox, and a way to mail it a PO.
//
//	devmailbox serve [-dir DIR] [-port 1143]    # until Ctrl-C (make dev-mailbox)
//	devmailbox send [-dir DIR] [-from ADDR] [-subject S] FILE.pdf...
//
// It is for this machine only: no TLS, the password in DIR (0600).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docintake/docintake/pkg/mailbox/mailboxtest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "devmailbox:", err)
		os.Exit(1)
	}
}

const usage = "usage: devmailbox serve [-dir DIR] [-port 1143] | send [-dir DIR] [-from ADDR] [-subject S] FILE.pdf..."

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage)
	}
	fs := flag.NewFlagSet("devmailbox "+args[0], flag.ContinueOnError)
	dir := fs.String("dir", filepath.Join(os.TempDir(), "docintake-devmailbox"), "the server's config, maildir and password")
	switch args[0] {
	case "serve":
		port := fs.Int("port", 1143, "loopback port")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return serve(*dir, *port)
	case "send":
		from := fs.String("from", "buyer@contoso.example", "sender (contoso.example maps to party CONTOSO)")
		subject := fs.String("subject", "Purchase order", "subject")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return send(*dir, *from, *subject, fs.Args())
	}
	return fmt.Errorf("%s", usage)
}

// mailboxesFile names the server as the dev client's orders mailbox.
const mailboxesFile = `# Written by devmailbox: the development mailbox of deploy/dev/clients.yaml's
# client, on a throwaway Dovecot (README "Quick start: orders from a mailbox").
mailboxes:
  - id: orders-dev
    client: dev
    imap: {host: 127.0.0.1, port: %d, security: none, username: %s, password_file: %s}
    folder: INBOX
    processed_folder: Processed
    error_folder: Not processed
    senders: {"contoso.example": CONTOSO}
`

func serve(dir string, port int) error {
	if !mailboxtest.Installed() {
		return fmt.Errorf("dovecot is not installed: apt-get install dovecot-imapd")
	}
	srv, err := mailboxtest.Start(mailboxtest.Options{Dir: filepath.Join(dir, "dovecot"), Port: port})
	if err != nil {
		return err
	}
	defer srv.Stop()
	pw := filepath.Join(dir, "imap-password")
	file := filepath.Join(dir, "mailboxes.yaml")
	if err := os.WriteFile(pw, []byte(srv.Password+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(file, fmt.Appendf(nil, mailboxesFile, srv.Port, srv.User, pw), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "port"), []byte(strconv.Itoa(srv.Port)), 0o644); err != nil {
		return err
	}
	fmt.Printf("dev mailbox: IMAP on %s (user %s), mailboxes file %s\n", srv.Addr(), srv.User, file)
	fmt.Printf("  run the system on it:  INTAKE_MAILBOXES_FILE=%s make run\n", file)
	fmt.Printf("  mail it a PO:          make dev-mail PDF=order.pdf\n")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-exited:
		return fmt.Errorf("dovecot exited: %v (log: %s)", err, filepath.Join(dir, "dovecot", "dovecot.log"))
	}
}

// send delivers a mail with the PDFs to the running server's INBOX.
func send(dir, from, subject string, files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("%s", usage)
	}
	b, err := os.ReadFile(filepath.Join(dir, "port"))
	if err != nil {
		return fmt.Errorf("is `make dev-mailbox` running? %w", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return err
	}
	pw, err := os.ReadFile(filepath.Join(dir, "imap-password"))
	if err != nil {
		return err
	}
	var parts []mailboxtest.Part
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		parts = append(parts, mailboxtest.Part{ContentType: "application/pdf", Filename: filepath.Base(f), Body: body})
	}
	id := fmt.Sprintf("dev-%d@%s", time.Now().UnixNano(), from[strings.LastIndexByte(from, '@')+1:])
	srv := &mailboxtest.Dovecot{Port: port, User: "orders", Password: strings.TrimSpace(string(pw))}
	if err := srv.Deliver("INBOX", mailboxtest.Mail(from, id, subject, parts...)); err != nil {
		return err
	}
	fmt.Printf("mailed %d PDF(s) from %s to the dev mailbox: Message-ID <%s>\n", len(parts), from, id)
	return nil
}
