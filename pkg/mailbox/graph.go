package mailbox

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
)

// graphUIDValidity is the UIDVALIDITY under which a Graph mailbox's mails
// are numbered: IMAP's are never 0, so a mailbox moved between IMAP and
// Graph starts a fresh position either way.
const graphUIDValidity = 0

// graphSource is a mail folder of a Microsoft 365 mailbox, read through
// Microsoft Graph: the folder's delta query lists what is new since the
// stored delta link, each mail's attachments are read one by one, and a
// finished mail is moved to the processed or error folder.
type graphSource struct {
	p      *Reader
	client *graphClient // kept across sessions: its token is cached
}

func newGraphSource(p *Reader) *graphSource {
	return &graphSource{p: p, client: newGraphClient(*p.mb.Graph, p.d.Getenv, p.log)}
}

// graphSession is a Graph source while the service's poller holds the lock: the
// folders' ids, and what the last delta round listed.
type graphSession struct {
	g       *graphSource
	c       *graphClient
	folder  string            // the read folder's id (or well-known name)
	folders map[string]string // processed and error folders: display name → id
	items   map[uint32]graphMessage
	atts    map[uint32][]graphAttachment // listed by size, read by load
	// deltaLink ends the round Pending listed; CaughtUp stores it.
	deltaLink string
}

func (g *graphSource) open(ctx context.Context) (Session, error) {
	s := &graphSession{g: g, c: g.client, folders: map[string]string{}}
	var err error
	if s.folder, err = s.folderID(ctx, g.p.mb.Folder, false); err != nil {
		return nil, err
	}
	for _, f := range []string{g.p.mb.ProcessedFolder, g.p.mb.ErrorFolder} {
		if s.folders[f], err = s.folderID(ctx, f, true); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// folderID resolves a folder by display name, creating it if asked.
func (s *graphSession) folderID(ctx context.Context, name string, create bool) (string, error) {
	id, ok, err := s.c.lookupFolder(ctx, name)
	switch {
	case err != nil || ok:
		return id, err
	case !create:
		return "", fmt.Errorf("graph folder %q: no top-level mail folder has this name", name)
	}
	var made struct {
		ID string `json:"id"`
	}
	if err := s.c.callJSON(ctx, http.MethodPost, s.c.userURL("/mailFolders"), map[string]string{"displayName": name}, &made); err != nil {
		return "", fmt.Errorf("graph create folder %q: %w", name, err)
	}
	return made.ID, nil
}

// lookupFolder finds a folder by display name among the mailbox's top
// level folders ("INBOX" is the well-known inbox); ok is false when none
// has the name.
func (c *graphClient) lookupFolder(ctx context.Context, name string) (id string, ok bool, err error) {
	if strings.EqualFold(name, "INBOX") {
		return "inbox", true, nil
	}
	var list struct {
		Value []struct {
			ID          string `json:"id"`
			DisplayName string `json:"displayName"`
		} `json:"value"`
	}
	q := url.Values{"$filter": {"displayName eq '" + strings.ReplaceAll(name, "'", "''") + "'"}, "$select": {"id,displayName"}}
	if err := c.getJSON(ctx, c.userURL("/mailFolders?"+q.Encode()), &list); err != nil {
		return "", false, fmt.Errorf("graph folder %q: %w", name, err)
	}
	for _, f := range list.Value {
		if f.DisplayName == name {
			return f.ID, true, nil
		}
	}
	return "", false, nil
}

// graphMessage is what a delta page says of a message.
type graphMessage struct {
	ID                string    `json:"id"`
	Subject           string    `json:"subject"`
	InternetMessageID string    `json:"internetMessageId"`
	ReceivedDateTime  time.Time `json:"receivedDateTime"`
	From              *struct {
		EmailAddress struct {
			Name    string `json:"name"`
			Address string `json:"address"`
		} `json:"emailAddress"`
	} `json:"from"`
	Removed *struct {
		Reason string `json:"reason"`
	} `json:"@removed"`
}

// deltaPage is one page of a delta round: a nextLink to the next page, or
// on the last page the deltaLink of the next round.
type deltaPage struct {
	Value     []graphMessage `json:"value"`
	NextLink  string         `json:"@odata.nextLink"`
	DeltaLink string         `json:"@odata.deltaLink"`
}

// Pending reads a delta round from the stored delta link (from the start
// when there is none, or when Graph no longer knows it) and lists the
// messages in the folder, oldest first, each with its UID.
func (s *graphSession) Pending(ctx context.Context) (uint32, []uint32, error) {
	mb := s.g.p.mb.ID
	link, err := s.g.p.d.Store.MailboxDeltaLink(ctx, mb, graphUIDValidity)
	if err != nil {
		return 0, nil, err
	}
	if link != "" && !s.c.own(link) {
		s.g.p.log.Warn("the stored delta link is not below base_url: reading the folder from the start")
		link = ""
	}
	msgs, next, err := s.round(ctx, link)
	if graphStatus(err) == http.StatusGone && link != "" {
		// The sync state expired: a full round lists every mail still in
		// the folder, and the rows of those already read answer them.
		s.g.p.log.Warn("graph delta link expired: reading the folder from the start", zap.Error(err))
		msgs, next, err = s.round(ctx, "")
	}
	if err != nil {
		return 0, nil, err
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	uids, err := s.g.p.d.Store.MailboxItemUIDs(ctx, mb, graphUIDValidity, ids)
	if err != nil {
		return 0, nil, err
	}
	s.items, s.atts, s.deltaLink = map[uint32]graphMessage{}, map[uint32][]graphAttachment{}, next
	for i, m := range msgs {
		s.items[uids[i]] = m
	}
	return graphUIDValidity, uids, nil
}

// round follows a delta round's pages to its deltaLink and returns the
// messages in the folder (the last word on each), oldest first.
func (s *graphSession) round(ctx context.Context, link string) ([]graphMessage, string, error) {
	if link == "" {
		q := url.Values{"$select": {"subject,from,internetMessageId,receivedDateTime"}}
		link = s.c.userURL("/mailFolders/" + url.PathEscape(s.folder) + "/messages/delta?" + q.Encode())
	}
	byID := map[string]graphMessage{}
	for pages := 0; ; pages++ {
		var page deltaPage
		if err := s.c.getJSON(ctx, link, &page); err != nil {
			return nil, "", err
		}
		for _, m := range page.Value {
			if m.Removed != nil {
				delete(byID, m.ID)
			} else {
				byID[m.ID] = m
			}
		}
		switch {
		case page.DeltaLink != "":
			return sortMessages(byID), page.DeltaLink, nil
		case page.NextLink == "":
			return nil, "", fmt.Errorf("graph delta: a page with neither @odata.nextLink nor @odata.deltaLink")
		case pages > 100000:
			return nil, "", fmt.Errorf("graph delta: more than %d pages", pages)
		}
		link = page.NextLink
	}
}

func sortMessages(byID map[string]graphMessage) []graphMessage {
	out := make([]graphMessage, 0, len(byID))
	for _, m := range byID {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b graphMessage) int {
		if c := a.ReceivedDateTime.Compare(b.ReceivedDateTime); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// CaughtUp stores the round's delta link: every mail it listed is
// finished, so the next round starts after them.
func (s *graphSession) CaughtUp(ctx context.Context) error {
	if s.deltaLink == "" {
		return nil
	}
	return s.g.p.d.Store.SetMailboxDeltaLink(ctx, s.g.p.mb.ID, graphUIDValidity, s.deltaLink)
}

// move moves a message to a folder; with immutable ids it keeps its id.
func (s *graphSession) move(ctx context.Context, uid uint32, folder string) error {
	m, ok := s.items[uid]
	if !ok {
		return fmt.Errorf("graph move: mail uid %d was not listed", uid)
	}
	body := map[string]string{"destinationId": s.folders[folder]}
	if err := s.c.callJSON(ctx, http.MethodPost, s.c.userURL("/messages/"+url.PathEscape(m.ID)+"/move"), body, nil); err != nil {
		return fmt.Errorf("graph move to %q: %w", folder, err)
	}
	return nil
}

// wait sleeps: Graph's change notifications need a public HTTPS endpoint,
// so a Graph mailbox is polled.
func (s *graphSession) wait(ctx context.Context, d time.Duration) error {
	sleep(ctx, d)
	return nil
}

func (s *graphSession) close() {}

// Arrivals is when the listed mails were received (the health report's
// oldest unprocessed mail).
func (s *graphSession) Arrivals(_ context.Context, uids []uint32) (map[uint32]time.Time, error) {
	out := make(map[uint32]time.Time, len(uids))
	for _, u := range uids {
		if m, ok := s.items[u]; ok {
			out[u] = m.ReceivedDateTime
		}
	}
	return out, nil
}
