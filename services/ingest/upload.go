package ingest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/intake"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/labstack/echo/v4"
)

const (
	maxParts         = 32       // a legitimate upload has at most 7
	maxFieldBytes    = 64 << 10 // one text field
	maxMessageIDLen  = 256      // characters
	maxFilenameBytes = 255
	maxSubjectLen    = 4096 // characters
)

// bodyReaders buffer a multipart body in front of mime/multipart, whose own
// 4 KiB buffer otherwise turned every 4 KiB of an upload into one read(2)
// on the client's connection (25 for a 100 KB PDF); pooled, since 64 KiB
// of garbage per request would cost more GC than the syscalls it saves.
var bodyReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// uploadRequest is what both upload variants carry, after binding.
type uploadRequest struct {
	MessageID, Subject, Template, PartyID, ResultMode, Filename *string
	FileGiven                                                   bool
	fieldErrs                                                   map[string]string
	// Routable: the client routes uploads naming neither template nor
	// party_id (route_unaddressed, issue 29) instead of the contract's 422.
	Routable bool
}

// ack is the contract's upload acknowledgement.
type ack struct {
	LogID  string `json:"log_id"`
	Status string `json:"status"`
}

func (r *uploadRequest) fail(field, msg string) {
	if r.fieldErrs == nil {
		r.fieldErrs = map[string]string{}
	}
	if _, ok := r.fieldErrs[field]; !ok {
		r.fieldErrs[field] = msg
	}
}

func given(p *string) bool { return p != nil && *p != "" }

// validText checks a text field for valid UTF-8 and no control characters
// (tab excepted in the subject) and returns a detail message or "".
func validText(v string, maxRunes int, allowTab bool) string {
	if !utf8.ValidString(v) {
		return "must be valid UTF-8"
	}
	if utf8.RuneCountInString(v) > maxRunes {
		return fmt.Sprintf("must be at most %d characters", maxRunes)
	}
	for _, r := range v {
		if unicode.IsControl(r) && !(allowTab && r == '\t') {
			return "must not contain control characters"
		}
	}
	return ""
}

// Valid validates the fields (not the file's content) and returns the
// field-level problems.
func (r *uploadRequest) Valid() map[string]string {
	switch {
	case r.MessageID == nil || strings.TrimSpace(*r.MessageID) == "":
		r.fail("message_id", "is required")
	default:
		if msg := validText(*r.MessageID, maxMessageIDLen, false); msg != "" {
			r.fail("message_id", msg)
		}
	}
	if r.Subject == nil {
		r.fail("subject", "is required")
	} else if msg := validText(*r.Subject, maxSubjectLen, true); msg != "" {
		r.fail("subject", msg)
	}
	switch {
	case given(r.Template) && given(r.PartyID):
		r.fail("template", "give either template or party_id, not both")
		r.fail("party_id", "give either template or party_id, not both")
	case !given(r.Template) && !given(r.PartyID) && !r.Routable:
		r.fail("template", "one of template or party_id is required")
	}
	for field, p := range map[string]*string{"template": r.Template, "party_id": r.PartyID} {
		if given(p) {
			if msg := validText(*p, 256, false); msg != "" {
				r.fail(field, msg)
			}
		}
	}
	if r.ResultMode != nil {
		if _, err := document.ParseResultMode(*r.ResultMode); err != nil {
			r.fail("result_mode", "must be no_items or absent")
		}
	}
	if !r.FileGiven {
		r.fail("file", "is required")
	}
	return r.fieldErrs
}

// cleanFilename keeps a display name only: no directories, no control or
// bidi control characters, valid UTF-8, bounded length. It is never used as a storage key.
func cleanFilename(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(name)
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || isBidiControl(r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "." || name == "/" || name == ".." {
		name = ""
	}
	for len(name) > maxFilenameBytes {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" {
		return "document.pdf"
	}
	return name
}

func (s *Server) handleUploadMultipart() echo.HandlerFunc {
	return func(c echo.Context) error {
		mt, params, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
		if mt != "multipart/form-data" {
			return document.CodedErrorf(document.EUNSUPPORTED, codeUnsupportedContent,
				"POST /incoming takes multipart/form-data (use /incoming-json for JSON)")
		}
		boundary := params["boundary"]
		if boundary == "" {
			return validationError(map[string]string{"body": "malformed multipart body"})
		}
		br := bodyReaders.Get().(*bufio.Reader)
		br.Reset(c.Request().Body)
		defer func() { br.Reset(nil); bodyReaders.Put(br) }()
		mr := multipart.NewReader(br, boundary)
		sp := newSpool()
		defer sp.Close()
		req := &uploadRequest{}
		for n := 0; ; n++ {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if isTooLarge(err) {
					return tooLarge(s.cfg.MaxUploadBytes)
				}
				return validationError(map[string]string{"body": "malformed multipart body"})
			}
			if n >= maxParts {
				return validationError(map[string]string{"body": fmt.Sprintf("more than %d parts", maxParts)})
			}
			name := part.FormName()
			if name == "file" {
				if req.FileGiven {
					req.fail("file", "given more than once")
					continue
				}
				req.FileGiven = true
				fn := part.FileName()
				req.Filename = &fn
				if _, err := io.Copy(sp, part); err != nil {
					if isTooLarge(err) {
						return tooLarge(s.cfg.MaxUploadBytes)
					}
					return validationError(map[string]string{"file": "could not read the file part"})
				}
				continue
			}
			dst := map[string]**string{"message_id": &req.MessageID, "subject": &req.Subject, "template": &req.Template,
				"party_id": &req.PartyID, "result_mode": &req.ResultMode}[name]
			b, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
			if err != nil {
				if isTooLarge(err) {
					return tooLarge(s.cfg.MaxUploadBytes)
				}
				return validationError(map[string]string{"body": "malformed multipart body"})
			}
			if dst == nil {
				continue // unknown parts are ignored, as HTML forms send extras
			}
			if len(b) > maxFieldBytes {
				req.fail(name, "is too long")
				continue
			}
			if *dst != nil {
				req.fail(name, "given more than once")
				continue
			}
			v := string(b)
			*dst = &v
		}
		return s.accept(c, req, sp)
	}
}

// jsonUpload is the body of POST /incoming-json.
type jsonUpload struct {
	FileBase64 *string `json:"file_base64"`
	Filename   *string `json:"filename"`
	MessageID  *string `json:"message_id"`
	Template   *string `json:"template"`
	Subject    *string `json:"subject"`
	ResultMode *string `json:"result_mode"`
	PartyID    *string `json:"party_id"`
}

func (s *Server) handleUploadJSON() echo.HandlerFunc {
	return func(c echo.Context) error {
		mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
		if mt != "application/json" {
			return document.CodedErrorf(document.EUNSUPPORTED, codeUnsupportedContent,
				"POST /incoming-json takes application/json (use /incoming for multipart)")
		}
		var body jsonUpload
		// encoding/json silently turns invalid UTF-8 into U+FFFD, which
		// would let two different message_ids collide; refuse it like the
		// multipart form does.
		dec := json.NewDecoder(&utf8Reader{r: c.Request().Body})
		if err := decodeUploadObject(dec, &body); err != nil {
			if isTooLarge(err) {
				return tooLarge(s.cfg.MaxUploadBytes)
			}
			if errors.Is(err, errInvalidUTF8) {
				return validationError(map[string]string{"body": "must be valid UTF-8"})
			}
			var ke *jsonKeyError
			if errors.As(err, &ke) {
				return validationError(map[string]string{ke.field: ke.problem})
			}
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return validationError(map[string]string{te.Field: "must be a " + te.Type.String()})
			}
			return validationError(map[string]string{"body": "must be one JSON object"})
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			if isTooLarge(err) {
				return tooLarge(s.cfg.MaxUploadBytes)
			}
			if errors.Is(err, errInvalidUTF8) {
				return validationError(map[string]string{"body": "must be valid UTF-8"})
			}
			return validationError(map[string]string{"body": "must be one JSON object"})
		}
		req := &uploadRequest{MessageID: body.MessageID, Subject: body.Subject, Template: body.Template,
			ResultMode: body.ResultMode, Filename: body.Filename}
		if body.PartyID != nil {
			req.fail("party_id", "is not supported by /incoming-json; use template, or /incoming")
		}
		req.Routable = clientFrom(c).RouteUnaddressed
		if (body.Template == nil || *body.Template == "") && !req.Routable {
			req.fail("template", "is required")
		}
		sp := newSpool()
		defer sp.Close()
		if body.FileBase64 != nil && *body.FileBase64 != "" {
			req.FileGiven = true
			if err := decodeBase64(sp, *body.FileBase64); err != nil {
				req.fail("file_base64", "must be base64 (RFC 4648)")
			}
			body.FileBase64 = nil // let the encoded copy be collected
		} else if body.FileBase64 != nil {
			req.FileGiven = true // present but empty: reported as an empty file below
		} else {
			req.fail("file_base64", "is required")
			req.FileGiven = true // reported under file_base64, not file
		}
		return s.accept(c, req, sp)
	}
}

// jsonKeyError refuses one key of a JSON upload; field is where the
// problem is reported (details).
type jsonKeyError struct{ field, problem string }

func (e *jsonKeyError) Error() string { return e.field + " " + e.problem }

var errNotObject = errors.New("not a JSON object")

// decodeUploadObject decodes one JSON object into body key by key. Left to
// itself encoding/json keeps the last of duplicate keys and matches keys to
// fields ignoring case ({"message_id":"a","Message_ID":"b"} reads "b"), so
// what a proxy, a WAF or the client's own log saw could differ from what is
// stored. A key given twice, or one that names a field only in another case
// (Unicode folding, as encoding/json would match it), is refused; any other
// unknown key is skipped, as before.
func decodeUploadObject(dec *json.Decoder, body *jsonUpload) error {
	fields := map[string]**string{"file_base64": &body.FileBase64, "filename": &body.Filename,
		"message_id": &body.MessageID, "template": &body.Template, "subject": &body.Subject,
		"result_mode": &body.ResultMode, "party_id": &body.PartyID}
	if tok, err := dec.Token(); err != nil {
		return err
	} else if tok != json.Delim('{') {
		return errNotObject
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // inside an object Token yields keys as strings
		dst, known := fields[key]
		if seen[key] && known {
			return &jsonKeyError{key, "is given more than once"}
		} else if seen[key] {
			return &jsonKeyError{"body", "has a key given more than once"}
		}
		seen[key] = true
		if !known {
			for name := range fields {
				if strings.EqualFold(key, name) {
					return &jsonKeyError{name, fmt.Sprintf("is spelled %q; keys are case-sensitive", key)}
				}
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if err := dec.Decode(dst); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				te.Field = key
			}
			return err
		}
	}
	_, err := dec.Token() // the closing brace
	return err
}

var errInvalidUTF8 = errors.New("invalid UTF-8")

// utf8Reader passes r through and fails with errInvalidUTF8 at the first
// byte sequence that is not UTF-8. A rune split across reads is held back
// (at most 3 bytes) until its end arrives.
type utf8Reader struct {
	r    io.Reader
	tail []byte // incomplete rune at the end of the previous read
}

func (u *utf8Reader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	data := p[:n]
	if len(u.tail) > 0 {
		data = append(u.tail, data...)
	}
	// Validate up to the start of a possibly incomplete last rune.
	cut := len(data)
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(data[:cut]) {
		return 0, errInvalidUTF8
	}
	u.tail = append(u.tail[:0:0], data[cut:]...)
	if err == io.EOF && len(u.tail) > 0 {
		return 0, errInvalidUTF8
	}
	return n, err
}

// decodeBase64 accepts standard base64 with or without padding, with line
// breaks or spaces (MIME style) and the URL-safe alphabet, since clients
// produce all of these.
func decodeBase64(dst io.Writer, s string) error {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		case '-':
			return '+'
		case '_':
			return '/'
		}
		return r
	}, s)
	s = strings.TrimRight(s, "=")
	_, err := io.Copy(dst, base64.NewDecoder(base64.RawStdEncoding, strings.NewReader(s)))
	return err
}

// accept validates the bound request and hands it to the intake use case,
// which stores the PDF and records the document with its job. It answers
// 202 only after the object is stored and the row and outbox row are
// committed.
func (s *Server) accept(c echo.Context, req *uploadRequest, sp *spool) error {
	if req.FileGiven && sp.size == 0 {
		field := "file"
		if c.Path() == s.cfg.BasePath+"/incoming-json" {
			field = "file_base64"
		}
		req.fail(field, "must not be empty")
	}
	req.Routable = clientFrom(c).RouteUnaddressed
	if errs := req.Valid(); len(errs) > 0 {
		return validationError(errs)
	}
	c.Set("message_id", *req.MessageID)
	body, err := sp.Reader()
	if err != nil {
		return err
	}
	rec, err := s.intake().Submit(c.Request().Context(), intake.Submission{
		Client: clientFrom(c), MessageID: *req.MessageID, Subject: *req.Subject,
		Template: deref(req.Template), PartyID: deref(req.PartyID), ResultMode: document.ResultMode(deref(req.ResultMode)),
		Filename: cleanFilename(deref(req.Filename)),
		// A retry of a large upload (spilled to disk) is answered from the
		// existing row before anything is stored; a small one lets
		// CreateDocument's unique (client, message_id) answer it, saving
		// every new upload a round trip (`make bench`, BENCHMARKS.md).
		PDF:   intake.PDF{Body: body, Size: sp.size, SHA256: sp.SHA256(), Head: sp.head, Large: sp.file != nil},
		Route: req.route(),
	})
	if err != nil {
		return err
	}
	c.Set("log_id", rec.Document.LogID)
	if !rec.Created {
		return c.JSON(http.StatusAccepted, ack{LogID: rec.Document.LogID, Status: "already received; state " + string(rec.Document.State)})
	}
	s.metrics.uploadBytes.Observe(float64(sp.size))
	return c.JSON(http.StatusAccepted, ack{LogID: rec.Document.LogID, Status: "received"})
}

// intake is the upload use case over the server's adapters; built per
// request because it is a handful of fields and s.now may be replaced.
func (s *Server) intake() *intake.Service {
	return &intake.Service{Store: s.store, Objects: s.objects, Templates: s.templates,
		SubjectPrefix: s.cfg.SubjectPrefix, Now: s.now, Logger: s.logger}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// documentDetails is the contract's document details resource.
type documentDetails struct {
	ID             string  `json:"id"`
	Filename       string  `json:"filename"`
	MessageID      string  `json:"message_id"`
	DocumentDate   *string `json:"document_date"`
	SourcePath     *string `json:"source_path"`
	ResultJSONPath *string `json:"result_json_path"`
	ResultPath     *string `json:"result_path"`
	DocumentState  string  `json:"document_state"`
	// StatusReason extends the contract's resource (additive, present only
	// when there is one): why a document was rejected or failed, the
	// webhook's status_reason, for clients that poll instead of listening.
	StatusReason string `json:"status_reason,omitempty"`
	// Template extends it too: the template the document is read with,
	// absent while none is chosen (a routed upload before the processor
	// chose one, or one no template claimed).
	Template string `json:"template,omitempty"`
	// Flags extend it as well (docintake's orders checks, docs/orders.md):
	// a price outside the client's price list, a delivery date that cannot
	// be met; absent when the document's current attempt raised none.
	Flags []resultjson.Flag `json:"flags,omitempty"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *Server) handleDocument() echo.HandlerFunc {
	return func(c echo.Context) error {
		logID := c.Param("log_id")
		d, err := s.store.DocumentByLogID(c.Request().Context(), clientFrom(c).ID, logID)
		if err != nil {
			return err
		}
		c.Set("log_id", d.LogID)
		out := documentDetails{ID: d.ID, Filename: d.Filename, MessageID: d.MessageID,
			SourcePath: orNull(d.SourcePath), ResultJSONPath: orNull(d.ResultJSONPath), ResultPath: orNull(d.ResultPath),
			DocumentState: string(d.State), StatusReason: d.StatusReason.WireValue(), Template: d.Template}
		if d.DocumentDate != nil {
			out.DocumentDate = orNull(d.DocumentDate.Format(time.DateOnly))
		}
		if out.Flags, err = s.documentFlags(c.Request().Context(), d); err != nil { // docflags.go
			return err
		}
		return c.JSON(http.StatusOK, out)
	}
}

// route is the routing the upload asks for: neither template nor party_id
// from a client that routes such uploads (intake.Route without a sender).
func (r *uploadRequest) route() *intake.Route {
	if !r.Routable || given(r.Template) || given(r.PartyID) {
		return nil
	}
	return &intake.Route{}
}
