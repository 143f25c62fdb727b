package mailbox

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
	// MaxPDFBytes is the largest PDF kept (the upload API's limit,
	// INTAKE_MAX_UPLOAD_BYTES); a larger one is counted while it streams
	// past and comes back TooLarge, without its bytes. 0 is
	// DefaultMaxPDFBytes.
	MaxPDFBytes int64
}

// DefaultMaxPDFBytes is INTAKE_MAX_UPLOAD_BYTES's default (25 MiB).
const DefaultMaxPDFBytes = 25 << 20

// DefaultLimits are the production bounds.
var DefaultLimits = Limits{MaxDepth: 10, MaxZipEntries: 200, MaxZipBytes: 200 << 20, MaxPDFBytes: DefaultMaxPDFBytes}

func (l Limits) maxPDF() int64 {
	if l.MaxPDFBytes <= 0 {
		return DefaultMaxPDFBytes
	}
	return l.MaxPDFBytes
}

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

// Attachment is one PDF: its display name and bytes. A PDF larger than
// Limits.MaxPDFBytes keeps its place (its index names the PDFs after it)
// with its Size, TooLarge and no Data: intake refuses it as the upload API
// would (payload_too_large).
type Attachment struct {
	Filename string
	Data     []byte
	Size     int64
	TooLarge bool
}

// ErrMalformed wraps a MIME structure the parser cannot read.
var ErrMalformed = errors.New("malformed MIME")

var wordDecoder = new(mime.WordDecoder)

// Parse reads a raw RFC 5322 mail and finds its PDFs: attached directly,
// inside .zip attachments, and inside attached mails (message/rfc822 or
// .eml), at any depth up to lim.MaxDepth.
func Parse(raw []byte, lim Limits) (Mail, error) { return ParseReader(bytes.NewReader(raw), lim) }

// ParseReader is Parse on a mail read as it streams (an IMAP literal): it
// holds the PDFs it keeps (each at most lim.MaxPDFBytes) and a zip while
// it looks into it, never the mail itself. The reader is read
// to its end. The MessageID is set even when the error wraps ErrMalformed
// (a mail without a usable Message-ID is named by its bytes' SHA-256).
func ParseReader(r io.Reader, lim Limits) (Mail, error) {
	sum := sha256.New()
	src := &sourceReader{r: r}
	tee := io.TeeReader(src, sum)
	var m Mail
	var header string
	msg, err := mail.ReadMessage(tee)
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrMalformed, err)
	} else {
		header = msg.Header.Get("Message-Id")
		m = Mail{Subject: decodeWords(msg.Header.Get("Subject")), From: msg.Header.Get("From")}
		w := walker{lim: lim, mail: &m}
		err = w.entity(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	}
	// The rest (an epilogue, or what a malformed part left) is read for
	// the hash, and so that a streamed literal is consumed.
	if _, cerr := io.Copy(io.Discard, tee); cerr != nil && err == nil {
		err = fmt.Errorf("%w: %v", ErrMalformed, cerr)
	}
	id := messageIDFromSum(header, sum.Sum(nil))
	if src.err != nil {
		// The connection broke, not the mail: not malformed, retried.
		return Mail{MessageID: id}, fmt.Errorf("reading the mail: %w", src.err)
	}
	if err != nil {
		return Mail{MessageID: id}, err
	}
	m.MessageID = id
	return m, nil
}

// sourceReader keeps the error of the reader a mail streams from, which
// is an outage (a broken connection), unlike the MIME errors the walk
// finds in what was read.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// messageID is the mail's Message-ID without its angle brackets, or, for a
// mail without a usable one, a name derived from its bytes: the same mail
// read again (after a UIDVALIDITY change) gets the same id, so intake's
// idempotency still holds.
func messageID(h string, raw []byte) string {
	sum := sha256.Sum256(raw)
	return messageIDFromSum(h, sum[:])
}

// messageIDFromSum is messageID with the SHA-256 of the mail's bytes.
func messageIDFromSum(h string, sum []byte) string {
	id := strings.TrimSpace(h)
	id = strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	// Leave room for "#index" within the contract's 256 characters.
	if id != "" && utf8.ValidString(id) && utf8.RuneCountInString(id) <= 240 && !strings.ContainsFunc(id, unicode.IsControl) {
		return id
	}
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
	if err := w.leaf(filename(h, params), ctype, decoder(h.Get("Content-Transfer-Encoding"), body), depth); err != nil {
		return fmt.Errorf("%w: %s part: %v", ErrMalformed, ctype, err)
	}
	return nil
}

// leaf reads one decoded part as it streams, by its first bytes: a PDF
// is kept (up to lim.MaxPDFBytes), an attached mail walked, a zip looked
// into; anything else is reported by name and read past. Read errors
// come back bare (the caller marks them malformed); the walk's own errors
// already wrap ErrMalformed.
func (w walker) leaf(name, ctype string, r io.Reader, depth int) error {
	br := bufio.NewReader(r)
	head, err := br.Peek(5)
	if err != nil && err != io.EOF {
		return err
	}
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return w.pdf(name, br)
	case ctype == "message/rfc822" || strings.HasSuffix(strings.ToLower(name), ".eml"):
		return w.attachedStream(br, depth)
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		// A zip is read whole (its directory is at its end); the mail's
		// own size limit bounds it.
		data, err := io.ReadAll(br)
		if err == nil {
			w.zip(name, data)
		}
		return err
	case name != "" || !strings.HasPrefix(ctype, "text/"):
		w.mail.Skipped = append(w.mail.Skipped, fmt.Sprintf("%s (%s)", cmpName(name), ctype))
	}
	// What is left is the mail's text, or an attachment reported above.
	_, err = io.Copy(io.Discard, br)
	return err
}

// pdf keeps a PDF, or, past lim.MaxPDFBytes, its name and size only.
func (w walker) pdf(name string, r io.Reader) error {
	data, size, err := readBounded(r, w.lim.maxPDF())
	if err != nil {
		return err
	}
	w.mail.PDFs = append(w.mail.PDFs, Attachment{Filename: cleanFilename(name), Data: data, Size: size, TooLarge: data == nil})
	return nil
}

// readBounded reads r up to limit bytes. A longer r is read to its end
// without keeping it and comes back as nil data with its size. It reads
// in chunks (64 KiB growing to 1 MiB), so a part cut off at the limit
// costs about the limit, not the doubling of a growing buffer.
func readBounded(r io.Reader, limit int64) (data []byte, size int64, err error) {
	var chunks [][]byte
	var n int64
	for n <= limit {
		c := make([]byte, min(1<<20, max(64<<10, n), limit+1-n))
		k, err := fill(r, c)
		n += int64(k)
		chunks = append(chunks, c[:k])
		switch {
		case err == io.EOF:
			if len(chunks) == 1 {
				return chunks[0], n, nil
			}
			return bytes.Join(chunks, nil), n, nil
		case err != nil:
			return nil, n, err
		}
	}
	chunks = nil // the collector may have them while the rest streams past
	rest, err := io.Copy(io.Discard, r)
	return nil, n + rest, err
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
	return w.attachedStream(bytes.NewReader(data), depth)
}

func (w walker) attachedStream(r io.Reader, depth int) error {
	msg, err := mail.ReadMessage(r)
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
		a := Attachment{Filename: cleanFilename(f.Name), Data: b, Size: int64(len(b))}
		if a.Size > w.lim.maxPDF() {
			a.Data, a.TooLarge = nil, true
		}
		w.mail.PDFs = append(w.mail.PDFs, a)
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

// fill reads until c is full or r ends. Unlike io.ReadFull it passes r's
// own errors on as they are: io.ErrUnexpectedEOF from a base64 decoder
// is a broken part, not a short read.
func fill(r io.Reader, c []byte) (int, error) {
	n := 0
	for n < len(c) {
		k, err := r.Read(c[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
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
