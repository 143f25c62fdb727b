package mailbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/emersion/go-imap/v2"
)

// Replaying a day of mail after an outage. The live poller reads only its
// folder; mails it already moved are in the processed folder (their
// documents may have been lost with a restored database) or in the error
// folder (an outage outlasted their retries, a sender was not mapped yet).
// Replay reads those folders' mails that arrived in a date range and
// submits each PDF whose message id ("<Message-ID>#n") has no document
// yet: a PDF already recorded is skipped, so exactly once still holds,
// and intake's idempotency settles a race with the live poller. A mail of
// the error folder whose PDFs all have documents afterwards moves to the
// processed folder; the rest stay where they are.

// ReplayOptions say which mails to replay.
type ReplayOptions struct {
	// Since and Until are days (IMAP's SINCE and BEFORE compare the
	// arrival date, without time): mails that arrived on Since, on Until
	// and between. A zero Until is Since's day.
	Since, Until time.Time
	// Folders to read; nil: the processed folder, then the error folder
	// (so a mail replay moves from the error folder is not read twice).
	Folders []string
	// DryRun lists what would be made without submitting or moving.
	DryRun bool
}

// ReplayMail is what replay did with one mail.
type ReplayMail struct {
	Folder    string
	UID       uint32
	Arrived   time.Time
	MessageID string
	// Message ids of its PDFs: made now (or, in a dry run, to be made),
	// recorded before, and refused by intake (with the reason).
	Created, Existing, Refused []string
	Problem                    string // why the mail has no documents to make (no PDF, malformed, too large, …)
	MovedTo                    string
}

// ReplayReport is the outcome of a replay; Mails in the order read.
type ReplayReport struct {
	Mails                       []ReplayMail
	Created, Existing, Refused  int
	WithoutDocuments, MovedMail int
	MissingFolders              []string
}

// Replay replays mb's mails of opt's range. d needs Store, Intake and
// Logger; Tuning and Getenv default as in NewReader. One replay of a mailbox runs at a
// time (a lock of its own; the live poller's is not needed, as replay
// never reads its folder). An error stops the replay with what was done so
// far in the report; running it again is safe.
func Replay(ctx context.Context, d Deps, mb Mailbox, opt ReplayOptions) (ReplayReport, error) {
	var rep ReplayReport
	if d.Store == nil || d.Intake == nil || d.Logger == nil {
		return rep, errors.New("mailbox replay: Deps needs Store, Intake and Logger")
	}
	p := NewReader(d, mb)
	lock, ok, err := d.Store.TryMailboxLock(ctx, mb.ID+"/replay")
	if err != nil {
		return rep, err
	}
	if !ok {
		return rep, fmt.Errorf("another replay of mailbox %s is running", mb.ID)
	}
	defer lock.Release()
	client, err := d.Store.Client(ctx, mb.Client)
	if err != nil {
		return rep, fmt.Errorf("client %q: %w", mb.Client, err)
	}
	c, err := dialIMAP(ctx, p)
	if err != nil {
		return rep, err
	}
	defer c.close()
	folders := opt.Folders
	if folders == nil {
		folders = []string{mb.ProcessedFolder, mb.ErrorFolder}
	}
	for _, f := range folders {
		r := replayer{p: p, c: c, client: client, opt: opt, folder: f, rep: &rep}
		if err := r.folderRun(ctx); err != nil {
			return rep, fmt.Errorf("replay %q: %w", f, err)
		}
	}
	return rep, nil
}

// dialIMAP logs in to an IMAP mailbox for a command; Graph mailboxes have
// no folders to search by date.
func dialIMAP(ctx context.Context, p *Reader) (*conn, error) {
	src, ok := p.newSource().(*imapSource)
	if !ok {
		return nil, fmt.Errorf("mailbox %s is read through Microsoft Graph: this command needs IMAP", p.mb.ID)
	}
	return src.dial(ctx)
}

// replayer replays one folder.
type replayer struct {
	p      *Reader
	c      *conn
	client document.Client
	opt    ReplayOptions
	folder string
	rep    *ReplayReport
}

func (r *replayer) folderRun(ctx context.Context) error {
	if ok, err := folderExists(r.c.c, r.folder); err != nil || !ok {
		if err == nil {
			r.rep.MissingFolders = append(r.rep.MissingFolders, r.folder)
		}
		return err
	}
	sel, err := r.c.c.Select(r.folder, &imap.SelectOptions{ReadOnly: r.opt.DryRun}).Wait()
	if err != nil {
		return wrapIMAP("select", err)
	}
	uids, err := r.search()
	if err != nil || len(uids) == 0 {
		return err
	}
	arrived, err := r.c.Arrivals(ctx, uids)
	if err != nil {
		return err
	}
	for _, uid := range uids {
		rm := ReplayMail{Folder: r.folder, UID: uid, Arrived: arrived[uid]}
		err := r.mail(ctx, sel.UIDValidity, &rm)
		r.rep.add(rm)
		if err != nil {
			return fmt.Errorf("mail uid %d: %w", uid, err)
		}
	}
	return nil
}

// search lists the selected folder's mails that arrived in the range.
func (r *replayer) search() ([]uint32, error) {
	until := r.opt.Until
	if until.IsZero() {
		until = r.opt.Since
	}
	crit := &imap.SearchCriteria{Since: r.opt.Since, Before: until.AddDate(0, 0, 1)}
	data, err := r.c.c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return nil, wrapIMAP("search", err)
	}
	return sortedUIDs(data.AllUIDs(), 0), nil
}

// mail reads one mail as the service's poller would and makes its missing documents.
func (r *replayer) mail(ctx context.Context, uidValidity uint32, rm *ReplayMail) error {
	mr := mailRead{p: r.p, c: r.c, client: r.client,
		row: store.MailboxMail{MailboxID: r.p.mb.ID, UIDValidity: uidValidity, UID: rm.UID}}
	m, kind, reason, err := mr.read(ctx)
	rm.MessageID = mr.row.MessageID
	if err != nil {
		return err
	}
	if reason != "" {
		rm.Problem = kind + ": " + reason
		return nil
	}
	party, _ := r.p.mb.Party(m.From)
	for i, a := range m.PDFs {
		id := m.MessageID + "#" + strconv.Itoa(i+1)
		_, err := r.p.d.Store.DocumentByMessageID(ctx, r.client.ID, id)
		switch {
		case err == nil:
			rm.Existing = append(rm.Existing, id)
			continue
		case document.ErrorKind(err) != document.ENOTFOUND:
			return err
		case r.opt.DryRun:
			rm.Created = append(rm.Created, id)
			continue
		}
		att, err := mr.submitOne(ctx, m, party, i+1, a)
		if err != nil {
			return err
		}
		switch att.Outcome {
		case store.AttachmentCreated:
			rm.Created = append(rm.Created, id)
		case store.AttachmentReplayed:
			rm.Existing = append(rm.Existing, id)
		default:
			rm.Refused = append(rm.Refused, id+": "+att.Reason)
		}
	}
	return r.moveFixed(ctx, rm)
}

// moveFixed moves a mail of the error folder whose PDFs all have
// documents now to the processed folder.
func (r *replayer) moveFixed(ctx context.Context, rm *ReplayMail) error {
	mb := r.p.mb
	if r.opt.DryRun || r.folder != mb.ErrorFolder || len(rm.Refused) > 0 {
		return nil
	}
	if err := r.c.move(ctx, rm.UID, mb.ProcessedFolder); err != nil {
		return err
	}
	rm.MovedTo = mb.ProcessedFolder
	return nil
}

func (rep *ReplayReport) add(m ReplayMail) {
	rep.Mails = append(rep.Mails, m)
	rep.Created += len(m.Created)
	rep.Existing += len(m.Existing)
	rep.Refused += len(m.Refused)
	if m.Problem != "" {
		rep.WithoutDocuments++
	}
	if m.MovedTo != "" {
		rep.MovedMail++
	}
}
