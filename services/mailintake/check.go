package mailintake

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/emersion/go-imap/v2"
)

// CheckFolder is one folder of a mailbox as the server shows it.
type CheckFolder struct {
	Role     string // folder, processed_folder, error_folder
	Name     string
	Exists   bool
	Messages uint32
	Unseen   uint32
}

// CheckReport is what `intakectl mailboxes test` prints: where it logged
// in and the mailbox's folders. It never holds a secret.
type CheckReport struct {
	Server   string
	Username string
	Folders  []CheckFolder
}

// OK says the mailbox can be read: the login worked (else Check returned
// an error) and the folder exists. Missing processed and error folders are
// made at the first pass.
func (r CheckReport) OK() bool {
	return len(r.Folders) > 0 && r.Folders[0].Exists
}

// Check logs in to mb as the poller would (its secret read from its file
// or variable through getenv, never printed) and looks at its folders
// without changing anything: nothing is created, selected or moved.
func Check(ctx context.Context, mb Mailbox, getenv func(string) string) (CheckReport, error) {
	if mb.Graph != nil {
		return checkGraph(ctx, mb, getenv) // graph_check.go
	}
	rep := CheckReport{Server: net.JoinHostPort(mb.IMAP.Host, strconv.Itoa(mb.IMAP.Port)), Username: mb.IMAP.Username}
	c, err := dialIMAP(ctx, toolPoller(Deps{Getenv: getenv}, mb))
	if err != nil {
		return rep, err
	}
	defer c.close()
	for _, f := range []struct{ role, name string }{
		{"folder", mb.Folder}, {"processed_folder", mb.ProcessedFolder}, {"error_folder", mb.ErrorFolder}} {
		cf := CheckFolder{Role: f.role, Name: f.name}
		st, err := c.c.Status(f.name, &imap.StatusOptions{NumMessages: true, NumUnseen: true}).Wait()
		var ie *imap.Error
		switch {
		case errors.As(err, &ie) && ie.Code == imap.ResponseCodeNonExistent:
		case err != nil:
			return rep, fmt.Errorf("imap status %q: %w", f.name, err)
		default:
			cf.Exists = true
			if st.NumMessages != nil {
				cf.Messages = *st.NumMessages
			}
			if st.NumUnseen != nil {
				cf.Unseen = *st.NumUnseen
			}
		}
		rep.Folders = append(rep.Folders, cf)
	}
	return rep, nil
}
