// Package intake is the use case every intake channel shares: a client
// offers one PDF with its message id, subject and template (or party id);
// intake resolves the template, stores the PDF, and records the document
// with its process job in one transaction, answering a repeated message id
// with the document it already made. The HTTP upload handlers and the
// mailbox intake call it; it knows neither HTTP nor IMAP.
//
// What is accepted is never lost: the PDF is stored before the row is
// committed, and an object is deleted only when no row can name it.
package intake

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/store"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

// Error codes of the contract that intake answers with (document.Error's
// Code); a channel maps them to its own statuses.
const (
	CodeNotPDF             = "not_a_pdf"
	CodeTemplateNotFound   = "template_not_found"
	CodeDuplicateMessageID = "duplicate_message_id"
	CodeUnavailable        = "unavailable"
)

// Store is what intake needs of PostgreSQL (implemented by *store.Store).
type Store interface {
	DocumentByMessageID(ctx context.Context, clientID, messageID string) (document.Document, error)
	CreateDocument(ctx context.Context, d document.Document, job store.OutboxRow) (document.Document, bool, error)
}

// Objects is what intake needs of the object store.
type Objects interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	Delete(ctx context.Context, key string) error
	URI(key string) string
}

// hashedObjects is an Objects that can store a body under the SHA-256 the
// caller computed (objectstore.S3), sparing it a second pass over the bytes.
type hashedObjects interface {
	PutSHA256(ctx context.Context, key string, r io.ReadSeeker, size int64, contentType string, sum []byte) error
}

// Templates resolves a template name or party id to the template a client
// may use (its own and the global ones, enabled).
type Templates interface {
	Resolve(clientID, name, partyID string) (template string, ok bool)
}

// Service accepts documents. Its fields are required except Now and Logger.
type Service struct {
	Store         Store
	Objects       Objects
	Templates     Templates
	SubjectPrefix string
	Now           func() time.Time // nil: time.Now
	Logger        *zap.Logger      // nil: no logs
}

// PDF is the file offered, read once by the channel: its bytes (a
// ReadSeeker lets the object store sign it without reading it again), its
// length, its SHA-256, and its first bytes.
type PDF struct {
	Body   io.Reader
	Size   int64
	SHA256 []byte
	Head   []byte
	// Large says the channel spilled the file to disk: a retry is then
	// answered from the existing row before anything is stored, since
	// writing and deleting megabytes costs more than the query.
	Large bool
}

// Submission is one document offered by a channel. Fields are validated
// by the channel (lengths, characters); intake checks what the contract
// decides: the file is a PDF and the template is one the client may use.
type Submission struct {
	Client     document.Client
	MessageID  string
	Subject    string
	Template   string // a template name, or "" with PartyID
	PartyID    string
	ResultMode document.ResultMode
	Filename   string // a display name, already cleaned by the channel
	PDF        PDF
	// Route, when set, lets a submission without Template and PartyID be
	// routed (route.go) instead of refused.
	Route *Route
}

// Receipt is intake's answer: the document, and whether this submission
// created it (false: the client already sent this message id with this
// file, and Document is that earlier document).
type Receipt struct {
	Document document.Document
	Created  bool
}

// Submit accepts sub: the PDF is stored and the document and its process
// job are committed before it returns a receipt. A message id the client
// used before returns that document for the same file and
// duplicate_message_id for another one.
func (s *Service) Submit(ctx context.Context, sub Submission) (Receipt, error) {
	// The contract sniffs the content: the bytes must start with "%PDF-";
	// file names and content types are not trusted.
	if !bytes.HasPrefix(sub.PDF.Head, []byte("%PDF-")) {
		return Receipt{}, document.CodedErrorf(document.EUNSUPPORTED, CodeNotPDF, "the file is not a PDF (it does not start with %%PDF-)")
	}
	if sub.PDF.Large {
		if r, done, err := s.existing(ctx, sub); done || err != nil {
			return r, err
		}
	}
	if sub.Route != nil && sub.Template == "" && sub.PartyID == "" {
		return s.submitRouted(ctx, sub) // route.go (issue 29)
	}
	resolved, ok := s.resolve(sub)
	if !ok {
		// A retry is answered with its document even when the template
		// has been removed since the first upload.
		if r, done, err := s.existing(ctx, sub); done || err != nil {
			return r, err
		}
		if sub.PartyID != "" {
			return Receipt{}, document.CodedErrorf(document.EBADREQUEST, CodeTemplateNotFound,
				"no template is configured for party_id %q", sub.PartyID)
		}
		return Receipt{}, document.CodedErrorf(document.EBADREQUEST, CodeTemplateNotFound,
			"template %q is not configured", sub.Template)
	}
	return s.create(ctx, sub, resolved, "")
}

// resolve names the submission's template among those its client may use.
func (s *Service) resolve(sub Submission) (string, bool) {
	resolved, ok := s.Templates.Resolve(sub.Client.ID, sub.Template, sub.PartyID)
	if !ok && sub.PartyID != "" && sub.Client.UnknownParty == document.UnknownPartyGeneric {
		// The client reads new buyers with the generic reader rather than
		// refusing them until a template exists (clients.unknown_party).
		return generic.Name, true
	}
	return resolved, ok
}

// existing answers sub from the client's document with its message id;
// done is false when there is none.
func (s *Service) existing(ctx context.Context, sub Submission) (Receipt, bool, error) {
	d, err := s.Store.DocumentByMessageID(ctx, sub.Client.ID, sub.MessageID)
	if document.ErrorKind(err) == document.ENOTFOUND {
		return Receipt{}, false, nil
	}
	if err != nil {
		return Receipt{}, true, err
	}
	r, err := replay(d, sub.PDF.SHA256)
	return r, true, err
}

// replay answers a repeated message id: the earlier document for the same
// file, duplicate_message_id for another one.
func replay(d document.Document, sum []byte) (Receipt, error) {
	if !bytes.Equal(d.FileSHA256, sum) {
		return Receipt{}, document.CodedErrorf(document.EINVALID, CodeDuplicateMessageID,
			"message_id %q was already used for a different file", d.MessageID)
	}
	return Receipt{Document: d}, nil
}

// create stores the PDF and commits the document with its job; note is
// the creating event's detail ("" none).
func (s *Service) create(ctx context.Context, sub Submission, tmpl, note string) (Receipt, error) {
	now := s.now().UTC()
	logID := uuid.NewString()
	d := document.Document{
		ID: uuid.Must(uuid.NewV7()).String(), LogID: logID, ClientID: sub.Client.ID, MessageID: sub.MessageID,
		FileSHA256: sub.PDF.SHA256, FileSize: sub.PDF.Size, Filename: sub.Filename, Subject: sub.Subject,
		Template: tmpl, PartyID: sub.PartyID, ResultMode: sub.ResultMode,
	}
	key := objectstore.SourceKey(logID, now)
	d.SourceKey, d.SourcePath = key, s.Objects.URI(key)
	if err := s.put(ctx, key, sub.PDF); err != nil {
		return Receipt{}, &document.Error{Kind: document.EUNAVAILABLE, Code: CodeUnavailable, Message: "object store unavailable", Err: err}
	}
	got, created, err := s.insert(ctx, d, lifecycle.Outbox(ctx, jobs.Process(s.SubjectPrefix, d, 1, now)), note)
	if err != nil {
		// A refusal (the message id names another file) wrote nothing, so
		// the object goes. Any other error keeps it: it does not say the
		// row was not written (PostgreSQL can commit and then lose the
		// connection before it answers), and the client's retry is then
		// answered with this very row. Deleting it lost such a document's
		// PDF in a chaos run; an object that really belongs to no row is
		// the orphan collector's, after INTAKE_ORPHAN_GRACE.
		if document.ErrorKind(err) == document.EINVALID {
			s.deleteOrphan(ctx, key)
		}
		return Receipt{}, err
	}
	if !created {
		// Lost a race with a concurrent identical submission: the other
		// one's row names its own object, and this one belongs to no row
		// for certain.
		s.deleteOrphan(ctx, key)
		return replay(got, sub.PDF.SHA256)
	}
	return Receipt{Document: got, Created: true}, nil
}

// put stores the PDF, signed with the SHA-256 the channel computed when the
// store can use it (the S3 SDK would otherwise hash the body again: 6 % of
// ingest's CPU under load, `make bench -profile`).
func (s *Service) put(ctx context.Context, key string, pdf PDF) error {
	if ho, ok := s.Objects.(hashedObjects); ok {
		if rs, ok := pdf.Body.(io.ReadSeeker); ok {
			return ho.PutSHA256(ctx, key, rs, pdf.Size, "application/pdf", pdf.SHA256)
		}
	}
	return s.Objects.Put(ctx, key, pdf.Body, pdf.Size, "application/pdf")
}

// deleteOrphan removes an object no row names, even when the submission's
// context has ended (the client went away after the refusal).
func (s *Service) deleteOrphan(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.Objects.Delete(ctx, key); err != nil && s.Logger != nil {
		s.Logger.Warn("delete orphaned upload", zap.String("key", key), zap.Error(err))
	}
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}
