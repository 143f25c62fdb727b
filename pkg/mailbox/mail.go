package mailbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// mailRead is the handling of one mail of a pass (Reader.Handle) or a
// replay.
type mailRead struct {
	p      *Reader
	c      Session
	client document.Client
	row    store.MailboxMail // its identity, then its outcome
}

// handle makes the mail's documents and moves it; an error leaves it in
// the folder for the next pass.
func (r *mailRead) handle(ctx context.Context) error {
	prev, seen, err := r.p.d.Store.MailboxMail(ctx, r.row.MailboxID, r.row.UIDValidity, r.row.UID)
	if err != nil {
		return err
	}
	if seen {
		r.row = prev
	}
	m, kind, reason, err := r.read(ctx)
	if err != nil {
		return err
	}
	if reason != "" {
		return r.reject(ctx, kind, reason)
	}
	if r.row.Outcome != store.MailCommitted {
		if err := r.submit(ctx, m); err != nil {
			return err
		}
	}
	if err := r.hookBeforeMove(); err != nil {
		return err
	}
	return r.finish(ctx)
}

// read fetches and parses the mail; a mail that can never become documents
// comes back with the kind and reason of its rejection.
func (r *mailRead) read(ctx context.Context) (m Mail, kind, reason string, err error) {
	size, envelopeID, ok, err := r.c.size(ctx, r.row.UID)
	if err != nil || !ok {
		return m, "", "", errors.Join(err, errGone(ok))
	}
	if size > r.p.d.Tuning.MaxMailBytes {
		r.row.MessageID = envelopeID
		if envelopeID == "" {
			r.row.MessageID = fmt.Sprintf("uid-%d-%d@mailintake.invalid", r.row.UIDValidity, r.row.UID)
		}
		return m, "too_large", fmt.Sprintf("the mail has %d bytes, more than the %d read", size, r.p.d.Tuning.MaxMailBytes), nil
	}
	m, err = r.c.load(ctx, r.row.UID, r.p.d.Tuning.Limits)
	r.row.MessageID = m.MessageID
	switch {
	case errors.Is(err, ErrMalformed):
		return m, "malformed", err.Error(), nil
	case err != nil:
		return m, "", "", err
	case len(m.PDFs) == 0:
		return m, "no_pdf", "no PDF attachment" + skipped(m.Skipped), nil
	}
	// A sender in no senders map is no refusal: intake's routing chain
	// (issue 29) chooses the template, by the client's sender mapping or by
	// the PDF's keywords.
	return m, "", "", nil
}

func errGone(ok bool) error {
	if ok {
		return nil
	}
	return errors.New("the mail is gone from the folder")
}

func skipped(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (other attachments: " + strings.Join(names, ", ") + ")"
}

// submit offers each PDF to intake and commits the outcomes. An outage is
// counted against the mail and returned (retried next pass) until it has
// failed MaxFailures times; then the mail is rejected.
func (r *mailRead) submit(ctx context.Context, m Mail) error {
	party, _ := r.p.mb.Party(m.From)
	atts := make([]store.MailboxAttachment, 0, len(m.PDFs))
	var refused []string
	for i, a := range m.PDFs {
		att, err := r.submitOne(ctx, m, party, i+1, a)
		if err != nil {
			return r.failure(ctx, err)
		}
		r.p.count.Document(r.p.mb.ID, att.Outcome)
		if att.Outcome == store.AttachmentRefused {
			refused = append(refused, fmt.Sprintf("%s: %s", att.Filename, att.Reason))
		}
		atts = append(atts, att)
	}
	r.row.Outcome, r.row.Reason = store.MailCommitted, ""
	if len(refused) > 0 {
		r.row.Reason = "refused: " + strings.Join(refused, "; ")
	}
	return r.p.d.Store.CommitMail(ctx, r.row, atts)
}

// submitOne offers one PDF; the error is an outage, a refusal is an outcome.
func (r *mailRead) submitOne(ctx context.Context, m Mail, party string, index int, a Attachment) (store.MailboxAttachment, error) {
	att := store.MailboxAttachment{Index: index, MessageID: m.MessageID + "#" + strconv.Itoa(index), Filename: a.Filename}
	if a.TooLarge {
		// Refused as the upload API refuses it (413), never stored.
		att.Outcome, att.Reason = store.AttachmentRefused, fmt.Sprintf("payload_too_large: the PDF has %d bytes, more than the %d accepted (INTAKE_MAX_UPLOAD_BYTES)",
			a.Size, r.p.d.Tuning.Limits.maxPDF())
		return att, nil
	}
	sum := sha256.Sum256(a.Data)
	rec, err := r.p.d.Intake.Submit(ctx, intake.Submission{
		Client: r.client, MessageID: att.MessageID, Subject: cleanSubject(m.Subject), Filename: a.Filename,
		Route: &intake.Route{Sender: m.From, SenderParty: party, Via: "the senders of mailbox " + r.p.mb.ID},
		PDF:   intake.PDF{Body: bytes.NewReader(a.Data), Size: int64(len(a.Data)), SHA256: sum[:], Head: a.Data[:min(len(a.Data), 8)]},
	})
	switch {
	case err != nil && transient(err):
		return att, err
	case err != nil:
		att.Outcome, att.Reason = store.AttachmentRefused, err.Error()
	case rec.Created:
		att.Outcome, att.LogID = store.AttachmentCreated, rec.Document.LogID
	default:
		att.Outcome, att.LogID = store.AttachmentReplayed, rec.Document.LogID
	}
	return att, nil
}

// failure counts a failed read of the mail; the last allowed one rejects it.
func (r *mailRead) failure(ctx context.Context, cause error) error {
	r.row.Reason = cause.Error()
	n, err := r.p.d.Store.RecordMailFailure(ctx, r.row)
	if err != nil {
		return errors.Join(cause, err)
	}
	r.p.count.Error(r.p.mb.ID, "retry")
	if n < r.p.d.Tuning.MaxFailures {
		return cause
	}
	return r.reject(ctx, "retry", fmt.Sprintf("failed %d times, last: %v", n, cause))
}

// reject moves the mail to the error folder with its reason (logged, kept
// in mailbox_mails and counted): it is reported, never dropped silently.
func (r *mailRead) reject(ctx context.Context, kind, reason string) error {
	r.p.count.Error(r.p.mb.ID, kind)
	r.p.log.Warn("mail not processed", zap.Uint32("uid", r.row.UID), zap.String("message_id", r.row.MessageID),
		zap.String("kind", kind), zap.String("reason", reason))
	r.row.Outcome, r.row.Reason = store.MailFailed, reason
	if err := r.c.move(ctx, r.row.UID, r.p.mb.ErrorFolder); err != nil {
		return err
	}
	r.p.count.Mail(r.p.mb.ID, store.MailFailed)
	return r.p.d.Store.FinishMail(ctx, r.row)
}

// finish moves a committed mail: to the processed folder, or to the error
// folder when intake refused one of its PDFs.
func (r *mailRead) finish(ctx context.Context) error {
	if r.row.Reason != "" {
		return r.reject(ctx, "refused", r.row.Reason)
	}
	if err := r.c.move(ctx, r.row.UID, r.p.mb.ProcessedFolder); err != nil {
		return err
	}
	r.row.Outcome = store.MailProcessed
	r.p.count.Mail(r.p.mb.ID, store.MailProcessed)
	return r.p.d.Store.FinishMail(ctx, r.row)
}

func (r *mailRead) hookBeforeMove() error {
	if h := r.p.d.BeforeMove; h != nil {
		return h(r.p.mb.ID, r.row.UID)
	}
	return nil
}

// transient tells whether a submission error may pass when tried again
// (an outage), as opposed to intake's refusal of the document.
func transient(err error) bool {
	e, ok := document.AsError(err)
	return !ok || e.Kind == document.EUNAVAILABLE
}

// cleanSubject makes the contract's subject of a mail's: valid UTF-8, no
// control characters but tab, at most 4096 characters (the upload API's
// limits).
func cleanSubject(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	for utf8.RuneCountInString(s) > 4096 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
