package mailbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"net/mail"
	"net/textproto"
	"net/url"
	"strings"
)

// graphAttachment is an attachment as listed, without its content.
type graphAttachment struct {
	Type        string `json:"@odata.type"` // #microsoft.graph.fileAttachment, itemAttachment, referenceAttachment
	ID          string `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
}

const (
	graphFileAttachment = "#microsoft.graph.fileAttachment"
	graphItemAttachment = "#microsoft.graph.itemAttachment"
)

// size lists the mail's attachments (kept for load) and returns their
// total size, which bounds what reading the mail fetches.
func (s *graphSession) size(ctx context.Context, uid uint32) (int64, string, bool, error) {
	m, ok := s.items[uid]
	if !ok {
		return 0, "", false, nil
	}
	atts, err := s.attachments(ctx, m.ID)
	if graphStatus(err) == http.StatusNotFound {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, err
	}
	s.atts[uid] = atts
	var n int64
	for _, a := range atts {
		n += a.Size
	}
	return n, m.messageID(), true, nil
}

// attachments lists a message's attachments, following the pages.
func (s *graphSession) attachments(ctx context.Context, messageID string) ([]graphAttachment, error) {
	q := url.Values{"$select": {"id,name,contentType,size"}}
	link := s.c.userURL("/messages/" + url.PathEscape(messageID) + "/attachments?" + q.Encode())
	var out []graphAttachment
	for link != "" {
		var page struct {
			Value    []graphAttachment `json:"value"`
			NextLink string            `json:"@odata.nextLink"`
		}
		if err := s.c.getJSON(ctx, link, &page); err != nil {
			return nil, fmt.Errorf("graph attachments: %w", err)
		}
		out = append(out, page.Value...)
		link = page.NextLink
	}
	return out, nil
}

// messageID is the mail's Internet Message-ID, or one derived from its
// Graph id (immutable, so the same mail gets the same one again).
func (m graphMessage) messageID() string {
	return messageID(m.InternetMessageID, []byte("graph:"+m.ID))
}

// from is the sender as an RFC 5322 address, as Party reads it.
func (m graphMessage) from() string {
	if m.From == nil || m.From.EmailAddress.Address == "" {
		return ""
	}
	return (&mail.Address{Name: m.From.EmailAddress.Name, Address: m.From.EmailAddress.Address}).String()
}

// load reads the mail's attachments and finds its PDFs as Parse does in
// a MIME mail: by their bytes, inside zips and attached mails.
func (s *graphSession) load(ctx context.Context, uid uint32, lim Limits) (Mail, error) {
	gm, ok := s.items[uid]
	if !ok {
		return Mail{}, fmt.Errorf("graph: mail uid %d was not listed", uid)
	}
	m := Mail{MessageID: gm.messageID(), Subject: gm.Subject, From: gm.from()}
	atts, ok := s.atts[uid]
	if !ok {
		var err error
		if atts, err = s.attachments(ctx, gm.ID); err != nil {
			return m, err
		}
	}
	w := walker{lim: lim, mail: &m}
	for _, a := range atts {
		if err := s.readAttachment(ctx, w, gm.ID, a); err != nil {
			return m, err
		}
	}
	return m, nil
}

// readAttachment adds one attachment to the walker's mail: a file by its
// content, an attached mail (itemAttachment) by its MIME form, anything
// else (a link to a cloud file) as skipped.
func (s *graphSession) readAttachment(ctx context.Context, w walker, messageID string, a graphAttachment) error {
	at := s.c.userURL("/messages/" + url.PathEscape(messageID) + "/attachments/" + url.PathEscape(a.ID))
	limit := s.g.p.d.Tuning.MaxMailBytes
	switch a.Type {
	case graphFileAttachment:
		data, err := s.fileContent(ctx, at, a.Size, limit)
		if err != nil {
			return fmt.Errorf("graph attachment %q: %w", a.Name, err)
		}
		return w.file(a.Name, a.ContentType, data)
	case graphItemAttachment:
		// $value of an attached message is its MIME form.
		data, err := s.c.getRaw(ctx, at+"/$value", limit)
		if err != nil {
			return fmt.Errorf("graph attached item %q: %w", a.Name, err)
		}
		if _, err := mail.ReadMessage(bytes.NewReader(data)); err != nil {
			w.mail.Skipped = append(w.mail.Skipped, cmpName(a.Name)+" (an attached item that is not a mail)")
			return nil
		}
		return w.attachedMail(data, 1)
	}
	w.mail.Skipped = append(w.mail.Skipped, fmt.Sprintf("%s (%s)", cmpName(a.Name), strings.TrimPrefix(a.Type, "#microsoft.graph.")))
	return nil
}

// fileContent reads a file attachment: small ones with their base64
// contentBytes, large ones raw through /$value.
func (s *graphSession) fileContent(ctx context.Context, at string, size, limit int64) ([]byte, error) {
	if size > graphInlineBytes {
		return s.c.getRaw(ctx, at+"/$value", limit)
	}
	var f struct {
		ContentBytes string `json:"contentBytes"`
	}
	if err := s.c.getJSON(ctx, at, &f); err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(f.ContentBytes)
	if err != nil {
		return nil, fmt.Errorf("contentBytes: %w", err)
	}
	return data, nil
}

// file walks an attachment's content as the MIME part it was before
// Exchange took the mail apart: its type and name in the part's header.
func (w walker) file(name, contentType string, data []byte) error {
	ctype, _, err := mime.ParseMediaType(contentType)
	if err != nil || strings.HasPrefix(ctype, "multipart/") {
		ctype = "application/octet-stream"
	}
	h := textproto.MIMEHeader{"Content-Type": {ctype}}
	if d := mime.FormatMediaType("attachment", map[string]string{"filename": name}); d != "" {
		h.Set("Content-Disposition", d)
	}
	return w.entity(h, bytes.NewReader(data), 1)
}
