package mailbox

import (
	"context"
	"net"
	"strconv"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
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

// Check logs in to mb as the service's poller would (its secret read from its file
// or variable through getenv, never printed) and looks at its folders
// without changing anything: nothing is created, selected or moved.
func Check(ctx context.Context, mb Mailbox, getenv func(string) string) (CheckReport, error) {
	if mb.Graph != nil {
		return checkGraph(ctx, mb, getenv) // graph_check.go
	}
	rep := CheckReport{Server: net.JoinHostPort(mb.IMAP.Host, strconv.Itoa(mb.IMAP.Port)), Username: mb.IMAP.Username}
	c, err := dialIMAP(ctx, NewReader(Deps{Getenv: getenv}, mb))
	if err != nil {
		return rep, err
	}
	defer c.close()
	for _, f := range []struct{ role, name string }{
		{"folder", mb.Folder}, {"processed_folder", mb.ProcessedFolder}, {"error_folder", mb.ErrorFolder}} {
		cf, err := imapFolder(c.c, f.name)
		if err != nil {
			return rep, err
		}
		cf.Role = f.role
		rep.Folders = append(rep.Folders, cf)
	}
	return rep, nil
}

// folderExists asks LIST (STATUS and SELECT of a missing folder answer a
// plain NO on some servers, Dovecot's among them).
func folderExists(c *imapclient.Client, name string) (bool, error) {
	list, err := c.List("", name, nil).Collect()
	if err != nil {
		return false, wrapIMAP("list "+strconv.Quote(name), err)
	}
	return len(list) > 0, nil
}

// imapFolder reads a folder's counts, if it exists.
func imapFolder(c *imapclient.Client, name string) (CheckFolder, error) {
	cf := CheckFolder{Name: name}
	ok, err := folderExists(c, name)
	if err != nil || !ok {
		return cf, err
	}
	st, err := c.Status(name, &imap.StatusOptions{NumMessages: true, NumUnseen: true}).Wait()
	if err != nil {
		return cf, wrapIMAP("status "+strconv.Quote(name), err)
	}
	cf.Exists = true
	if st.NumMessages != nil {
		cf.Messages = *st.NumMessages
	}
	if st.NumUnseen != nil {
		cf.Unseen = *st.NumUnseen
	}
	return cf, nil
}
