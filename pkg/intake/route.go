package intake

import (
	"context"
	"fmt"
	"net/mail"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
)

// Route lets intake choose the template of a submission that names
// neither template nor party_id (issue 29), where the channel allows it:
// the mailbox always, an HTTP upload when its client sets
// route_unaddressed. The routing chain's first step, the sender mapping,
// runs here; a document it does not settle is stored without a template
// ("route pending") and the processor continues the chain on the PDF's
// text: the client's templates compete on their keywords, then the generic
// reader where the client allows it, else unknown_format.
type Route struct {
	// Sender is the mail's From ("Name <addr>" or a bare address); "" for
	// channels without one.
	Sender string
	// SenderParty is the party_id the channel's own sender map gives (a
	// mailbox's senders:), tried before the client's sender mapping; Via
	// names that map for the document's history.
	SenderParty string
	Via         string
}

// senderStore is the part of *store.Store the sender step reads; a Store
// without it (a test's fake) has no sender mapping.
type senderStore interface {
	SenderParty(ctx context.Context, clientID, from string) (key, party string, ok bool, err error)
}

// notedStore records how the template was chosen in the creating event.
type notedStore interface {
	CreateDocumentNoted(ctx context.Context, d document.Document, job store.OutboxRow, note string) (document.Document, bool, error)
}

// submitRouted accepts a submission without template and party_id: the
// sender's party_id, when a mapping names one whose template the client may
// use, chooses the template at once; otherwise the document waits for the
// processor's routing. Either way the creating event says why.
func (s *Service) submitRouted(ctx context.Context, sub Submission) (Receipt, error) {
	party, why, err := s.senderParty(ctx, sub)
	if err != nil {
		return Receipt{}, &document.Error{Kind: document.EUNAVAILABLE, Code: CodeUnavailable, Message: "sender mapping unavailable", Err: err}
	}
	const later = "the processor chooses the template by keywords"
	if party == "" {
		note := "route pending: no template or party_id; " + later
		if addr := senderAddress(sub.Route.Sender); addr != "" {
			note = fmt.Sprintf("route pending: sender %s is in no sender mapping; %s", addr, later)
		}
		return s.create(ctx, sub, "", note)
	}
	sub.PartyID = party
	if tmpl, ok := s.Templates.Resolve(sub.Client.ID, "", party); ok {
		return s.create(ctx, sub, tmpl, fmt.Sprintf("routed by sender: %s; template %s", why, tmpl))
	}
	return s.create(ctx, sub, "", fmt.Sprintf("route pending: %s, which no template claims; %s", why, later))
}

// senderParty is the routing chain's first step: the channel's own map,
// else the client's mapping of kind sender (address before domain). why
// says which entry matched.
func (s *Service) senderParty(ctx context.Context, sub Submission) (party, why string, err error) {
	r := sub.Route
	addr := senderAddress(r.Sender)
	if r.SenderParty != "" {
		return r.SenderParty, fmt.Sprintf("sender %s is mapped to party_id %s by %s", addr, r.SenderParty, r.Via), nil
	}
	ss, ok := s.Store.(senderStore)
	if addr == "" || !ok {
		return "", "", nil
	}
	key, party, ok, err := ss.SenderParty(ctx, sub.Client.ID, addr)
	if err != nil || !ok {
		return "", "", err
	}
	return party, fmt.Sprintf("sender %s is mapped to party_id %s by the client's sender mapping %q", addr, party, key), nil
}

// senderAddress is the bare address of a From header ("" when there is
// none); an unparsable one is kept as written, lower-cased, for the
// history.
func senderAddress(from string) string {
	if a, err := mail.ParseAddress(from); err == nil {
		return strings.ToLower(a.Address)
	}
	return strings.ToLower(strings.TrimSpace(from))
}

// insert commits d with its job, with note in the creating event when the
// store can record one.
func (s *Service) insert(ctx context.Context, d document.Document, job store.OutboxRow, note string) (document.Document, bool, error) {
	if ns, ok := s.Store.(notedStore); ok && note != "" {
		return ns.CreateDocumentNoted(ctx, d, job, note)
	}
	return s.Store.CreateDocument(ctx, d, job)
}
