package mailintake

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits bound what one mail may make the parser do; a mail over them is
// reported, never half-read.
type Limits struct {
	MaxDepth      int   // nesting of multiparts and attached mails
	MaxZipEntries int   // entries of one zip looked at
	MaxZipBytes   int64 // bytes one zip may unpack to
}

// DefaultLimits are the production bounds.
var DefaultLimits = Limits{MaxDepth: 10, MaxZipEntries: 200, MaxZipBytes: 200 << 20}

// Mail is what intake needs of one e-mail: its identity, subject, sender,
// the PDFs it carries (in the order a reader meets them, which is stable,
// so an attachment's index names it across re-reads) and what else was
// attached.
type Mail struct {
	MessageID string
	Subject   string
	From      string
	PDFs      []Attachment
	Skipped   []string // "name (content type)" of attachments that are not PDFs
}

// Attachment is one PDF: its display name and bytes.
type Attachment struct {
	Filename string
	Data     []byte
}

// ErrMalformed wraps a MIME structure the parser cannot read.
var ErrMalformed = errors.New("malformed MIME")

var wordDecoder = new(mime.WordDecoder)

// Parse reads a raw RFC 5322 mail and finds its PDFs: attached directly,
// inside .zip attachments, and inside attached mails (message/rfc822 or
// .eml), at any depth up to lim.MaxDepth.
func Parse(raw []byte, lim Limits) (Mail, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Mail{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	m := Mail{
		MessageID: messageID(msg.Header.Get("Message-Id"), raw),
		Subject:   decodeWords(msg.Header.Get("Subject")),
		From:      msg.Header.Get("From"),
	}
	w := walker{lim: lim, mail: &m}
	if err := w.entity(textproto.MIMEHeader(msg.Header), msg.Body, 0); err != nil {
		return Mail{}, err
	}
	return m, nil
}

// messageID is the mail's Message-ID without its angle brackets, or, for a
// mail without a usable one, a name derived from its bytes: the same mail
// read again (after a UIDVALIDITY change) gets the same id, so intake's
// idempotency still holds.
func messageID(h string, raw []byte) string {
	id := strings.TrimSpace(h)
	id = strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	// Leave room for "#index" within the contract's 256 characters.
	if id != "" && utf8.ValidString(id) && utf8.RuneCountInString(id) <= 240 && !strings.ContainsFunc(id, unicode.IsControl) {
		return id
	}
	sum := sha256.Sum256(raw)
	return "sha256-" + hex.EncodeToString(sum[:16]) + "@mailintake.invalid"
}

func decodeWords(s string) string {
	d, err := wordDecoder.DecodeHeader(s)
	if err != nil {
		return s
	}
	return d
}

type walker struct {
	lim  Limits
	mail *Mail
}

// entity reads one MIME entity whose transfer encoding is still applied.
func (w walker) entity(h textproto.MIMEHeader, body io.Reader, depth int) error {
	if depth > w.lim.MaxDepth {
		return fmt.Errorf("%w: nested deeper than %d levels", ErrMalformed, w.lim.MaxDepth)
	}
	ctype, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		ctype, params = "text/plain", nil // RFC 2045's default for an unreadable type
	}
	if strings.HasPrefix(ctype, "multipart/") {
		return w.multipart(body, params["boundary"], depth)
	}
	data, err := io.ReadAll(decoder(h.Get("Content-Transfer-Encoding"), body))
	if err != nil {
		return fmt.Errorf("%w: %s part: %v", ErrMalformed, ctype, err)
	}
	name := filename(h, params)
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		w.mail.PDFs = append(w.mail.PDFs, Attachment{Filename: cleanFilename(name), Data: data})
	case ctype == "message/rfc822" || strings.HasSuffix(strings.ToLower(name), ".eml"):
		return w.attachedMail(data, depth)
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		w.zip(name, data)
	case name != "" || !strings.HasPrefix(ctype, "text/"):
		w.mail.Skipped = append(w.mail.Skipped, fmt.Sprintf("%s (%s)", cmpName(name), ctype))
	}
	// What is left is the mail's text: no attachment.
	return nil
}

func (w walker) multipart(body io.Reader, boundary string, depth int) error {
	if boundary == "" {
		return fmt.Errorf("%w: multipart without boundary", ErrMalformed)
	}
	mr := multipart.NewReader(body, boundary)
	for {
		// NextRawPart: the transfer encoding is decoded by entity, the
		// same way for every part.
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if err := w.entity(p.Header, p, depth+1); err != nil {
			return err
		}
	}
}

// attachedMail walks a forwarded mail: its PDFs are this mail's.
func (w walker) attachedMail(data []byte, depth int) error {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: attached mail: %v", ErrMalformed, err)
	}
	return w.entity(textproto.MIMEHeader(msg.Header), msg.Body, depth+1)
}

// zip adds the PDFs of a zip attachment, within lim's bounds; entries not
// read are reported.
func (w walker) zip(name string, data []byte) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		w.mail.Skipped = append(w.mail.Skipped, fmt.Sprintf("%s (unreadable zip: %v)", cmpName(name), err))
		return
	}
	budget := w.lim.MaxZipBytes
	for i, f := range zr.File {
		if i >= w.lim.MaxZipEntries {
			w.mail.Skipped = append(w.mail.Skipped, fmt.Sprintf("%s (entries after the first %d)", cmpName(name), w.lim.MaxZipEntries))
			return
		}
		if f.FileInfo().IsDir() {
			continue
		}
		b, err := readEntry(f, budget)
		if err != nil {
			w.mail.Skipped = append(w.mail.Skipped, fmt.Sprintf("%s/%s (%v)", cmpName(name), f.Name, err))
			if errors.Is(err, errZipBudget) {
				return
			}
			continue
		}
		budget -= int64(len(b))
		if !bytes.HasPrefix(b, []byte("%PDF-")) {
			w.mail.Skipped = append(w.mail.Skipped, fmt.Sprintf("%s/%s (not a PDF)", cmpName(name), f.Name))
			continue
		}
		w.mail.PDFs = append(w.mail.PDFs, Attachment{Filename: cleanFilename(f.Name), Data: b})
	}
}

var errZipBudget = errors.New("zip unpacks to more than the limit")

// readEntry reads a zip entry up to budget bytes; the header's size is not
// trusted (a zip bomb lies).
func readEntry(f *zip.File, budget int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, budget+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > budget {
		return nil, errZipBudget
	}
	return b, nil
}

// decoder undoes a part's Content-Transfer-Encoding.
func decoder(cte string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		// Mail wraps base64 in lines; the decoder must skip the breaks.
		return base64.NewDecoder(base64.StdEncoding, newlineSkipper{bufio.NewReader(r)})
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}

// newlineSkipper drops CR, LF and blanks, which base64 bodies contain.
type newlineSkipper struct{ r *bufio.Reader }

func (s newlineSkipper) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c, err := s.r.ReadByte()
		if err != nil {
			if n > 0 && err == io.EOF {
				return n, nil
			}
			return n, err
		}
		if c == '\r' || c == '\n' || c == ' ' || c == '\t' {
			continue
		}
		p[n] = c
		n++
	}
	return n, nil
}

// filename is a part's name: the disposition's filename, else the
// type's name parameter (RFC 2231 and RFC 2047 encodings decoded).
func filename(h textproto.MIMEHeader, ctypeParams map[string]string) string {
	if _, p, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil && p["filename"] != "" {
		return decodeWords(p["filename"])
	}
	return decodeWords(ctypeParams["name"])
}

func cmpName(name string) string {
	if name == "" {
		return "unnamed part"
	}
	return name
}

// cleanFilename makes a display name of an attachment's name as the upload
// API does: the base name, valid UTF-8, no control characters, at most
// 255 bytes; "document.pdf" when nothing is left.
func cleanFilename(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, name))
	if name == "." || name == "/" || name == ".." {
		name = ""
	}
	for len(name) > 255 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" {
		return "document.pdf"
	}
	return name
}
