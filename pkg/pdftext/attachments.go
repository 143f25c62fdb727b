package pdftext

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Attachment is one file embedded in a PDF (the EmbeddedFiles name tree and
// file attachment annotations, which is where PDF/A-3 associated files of
// Factur-X, ZUGFeRD and Order-X also live).
type Attachment struct {
	Index int    // 1-based, as pdfdetach numbers them
	Name  string // the file name the PDF gives it; never trusted as a path
	Data  []byte // nil when Skipped
	// Skipped says why the attachment was not read ("larger than 10485760
	// bytes", "beyond the first 16 attachments"); empty when Data is set.
	Skipped string
}

// AttachmentLimits bound the reading of attachments, which are attacker
// controlled. Zero fields take the defaults below.
type AttachmentLimits struct {
	MaxCount int           // attachments read; later ones are listed as skipped (default 16)
	MaxBytes int64         // size of one attachment; larger ones are skipped (default 10 MiB)
	Timeout  time.Duration // the whole listing and reading (default 10 s)
	// MemoryLimitBytes is pdfdetach's address-space limit (default
	// DefaultSubprocessMemory).
	MemoryLimitBytes int64
}

// Attachment defaults, for zero AttachmentLimits fields (and the defaults of
// INTAKE_EMBEDDED_MAX_COUNT, INTAKE_EMBEDDED_MAX_BYTES and
// INTAKE_EMBEDDED_TIMEOUT).
const (
	DefaultAttachmentCount         = 16
	DefaultAttachmentBytes   int64 = 10 << 20
	DefaultAttachmentTimeout       = 10 * time.Second
)

// maxAttachmentList bounds pdfdetach -list's output.
const maxAttachmentList = 1 << 20

// listLine is one line of `pdfdetach -list`: "N: name".
var listLine = regexp.MustCompile(`^(\d+): (.*)$`)

// Attachments returns the files embedded in pdf, read with poppler's
// pdfdetach in the same sandbox as pdftotext (private directory, address
// space, CPU and output limits, process-group kill on the deadline).
// BENCHMARKS.md "PDF attachments" has the measurement behind the choice.
//
// Attachments over lim.MaxBytes are not read (pdfdetach is killed once its
// output passes the cap, so an inflating bomb costs at most that much), and
// only the first lim.MaxCount are read; both are returned with Skipped set.
// A PDF poppler cannot parse gives an error wrapping ErrUnreadable, the
// deadline one wrapping ErrTimeout, a missing pdfdetach ErrUnavailable. A PDF
// without attachments gives none and no error.
func Attachments(ctx context.Context, pdf []byte, lim AttachmentLimits) ([]Attachment, error) {
	if lim.MaxCount <= 0 {
		lim.MaxCount = DefaultAttachmentCount
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultAttachmentBytes
	}
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultAttachmentTimeout
	}
	if !mayHaveAttachments(pdf) {
		return nil, nil
	}
	bin, err := exec.LookPath("pdfdetach")
	if err != nil {
		return nil, fmt.Errorf("pdfdetach: %w: %w", ErrUnavailable, err)
	}
	sb := newSandbox(Options{Timeout: lim.Timeout, MemoryLimitBytes: lim.MemoryLimitBytes, MaxOutputBytes: maxAttachmentList})
	var out []Attachment
	_, err = withInput(ctx, lim.Timeout, pdf, func(ctx context.Context, dir, file string) (*Text, error) {
		list, err := sb.run(ctx, dir, bin, []string{"-list", "-enc", "UTF-8", file}, nil)
		if err != nil {
			return nil, fmt.Errorf("pdfdetach -list: %w", err)
		}
		for _, l := range strings.Split(string(list), "\n") {
			m := listLine.FindStringSubmatch(strings.TrimRight(l, "\r"))
			if m == nil {
				continue
			}
			n, err := strconv.Atoi(m[1])
			if err != nil || n <= 0 {
				continue
			}
			out = append(out, Attachment{Index: n, Name: m[2]})
		}
		one := sb
		one.maxOut = lim.MaxBytes
		for i := range out {
			a := &out[i]
			if i >= lim.MaxCount {
				a.Skipped = fmt.Sprintf("beyond the first %d attachments", lim.MaxCount)
				continue
			}
			// The file is written to our stdout, so the sandbox's output
			// cap bounds it and no name from the PDF becomes a path.
			data, err := one.run(ctx, dir, bin, []string{"-save", strconv.Itoa(a.Index), "-o", "/dev/stdout", file}, nil)
			switch {
			case errors.Is(err, errOutputTooLarge):
				a.Skipped = fmt.Sprintf("larger than %d bytes", lim.MaxBytes)
			case errors.Is(err, ErrUnreadable):
				a.Skipped = "unreadable: " + err.Error()
			case err != nil:
				return nil, fmt.Errorf("pdfdetach -save %d: %w", a.Index, err)
			default:
				a.Data = data
			}
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// mayHaveAttachments is a byte scan that spares pdfdetach's process start
// for the many PDFs that cannot carry an attachment. Every way to attach a
// file (the EmbeddedFiles name tree, /AF, file attachment annotations) goes
// through a file specification with an /EF key, and an embedded file is a
// stream, usually typed /EmbeddedFile. Those names are in the file as plain
// bytes, or, since PDF 1.5, inside an object stream: such streams are
// inflated (bounded) and scanned too. Only a stream this scan cannot read
// (another filter, corrupt or encrypted data, over the bound) leaves the
// decision to pdfdetach. A PDF that spells these names with #-escapes only
// hides its own attachment: its text is read.
func mayHaveAttachments(pdf []byte) bool {
	if mentionsAttachment(pdf) {
		return true
	}
	found, ok := objectStreamsMention(pdf, maxObjStmInflated)
	return found || !ok
}

var attachmentNames = [][]byte{[]byte("EmbeddedFile"), []byte("/EF")}

// attachmentAnchors are attachmentNames with the offset of their F. An F is
// rare in compressed data and in the structure dictionaries that fill most
// object streams, unlike the '/' and 'E' that bytes.Contains would anchor
// on: 24 µs of the 110 µs a Contoso PO's scan took went to the names, 0.5 µs now.
var attachmentAnchors = func() []anchor {
	var a []anchor
	for _, n := range attachmentNames {
		f := bytes.IndexByte(n, 'F')
		if f < 0 {
			panic("pdftext: attachment name " + string(n) + " without an F")
		}
		a = append(a, anchor{n, f})
	}
	return a
}()

type anchor struct {
	name []byte
	f    int // offset of the name's first F
}

// mentionsAttachment reports whether b contains one of attachmentNames, as
// bytes.Contains would, in one pass over b's F bytes: every occurrence of a
// name has its first F at the same offset.
func mentionsAttachment(b []byte) bool {
	for i := 0; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], 'F')
		if j < 0 {
			return false
		}
		i += j
		for _, a := range attachmentAnchors {
			if start := i - a.f; start >= 0 && bytes.HasPrefix(b[start:], a.name) {
				return true
			}
		}
	}
	return false
}

// maxObjStmInflated bounds what objectStreamsMention inflates per PDF: object
// streams hold small dictionaries, not content; past this the scan gives up
// and pdfdetach decides.
const maxObjStmInflated = 16 << 20

// objectStreamsMention inflates the PDF's object streams (/Type /ObjStm,
// FlateDecode without parameters) and reports whether one mentions an
// attachment name. ok is false when a stream could not be read, so the
// caller cannot rule attachments out.
func objectStreamsMention(pdf []byte, budget int64) (found, ok bool) {
	rest := pdf
	for {
		i := bytes.Index(rest, []byte("/ObjStm"))
		if i < 0 {
			return false, true
		}
		// The stream's dictionary runs from the last "<<" before the
		// name to the "stream" keyword after it.
		open := bytes.LastIndex(rest[:i], []byte("<<"))
		kw := bytes.Index(rest[i:], []byte("stream"))
		if open < 0 || kw < 0 || kw > 4096 {
			return false, false
		}
		dict := rest[open : i+kw]
		if !bytes.Contains(dict, []byte("/FlateDecode")) || bytes.Contains(dict, []byte("/DecodeParms")) ||
			bytes.Contains(dict, []byte("/Filter [")) || bytes.Contains(dict, []byte("/Filter[")) {
			return false, false
		}
		start := i + kw + len("stream")
		if bytes.HasPrefix(rest[start:], []byte("\r\n")) {
			start += 2
		} else if bytes.HasPrefix(rest[start:], []byte("\n")) {
			start++
		}
		end := bytes.Index(rest[start:], []byte("endstream"))
		if end < 0 {
			return false, false
		}
		mention, n, err := inflateMentions(rest[start:start+end], budget)
		if err != nil {
			return false, false
		}
		if mention {
			return true, true
		}
		budget -= n
		rest = rest[start+end:]
	}
}

// inflater is a zlib reader and a read buffer kept between scans: a fresh
// flate decompressor and a buffer grown to the inflated size cost more than
// the inflating itself for the small object streams of most PDFs.
type inflater struct {
	src bytes.Reader
	zr  io.ReadCloser // implements zlib.Resetter
	buf []byte
}

var inflaters = sync.Pool{New: func() any { return &inflater{buf: make([]byte, mentionOverlap+32<<10)} }}

// mentionOverlap is what each read keeps of the one before, so a name cut
// by a read boundary is still seen whole.
var mentionOverlap = maxLen(attachmentNames) - 1

func maxLen(names [][]byte) int {
	n := 0
	for _, s := range names {
		n = max(n, len(s))
	}
	return n
}

// inflateMentions decompresses zlib data and reports whether it mentions an
// attachment name, and how many bytes it inflated. More than limit bytes, or
// a stream that does not inflate to its end (truncated, corrupt, a wrong
// checksum), is an error, unless a name was seen before.
func inflateMentions(b []byte, limit int64) (found bool, n int64, err error) {
	if limit <= 0 {
		return false, 0, errors.New("object streams over the inflate bound")
	}
	f := inflaters.Get().(*inflater)
	defer inflaters.Put(f)
	f.src.Reset(b)
	if f.zr == nil {
		f.zr, err = zlib.NewReader(&f.src)
	} else {
		err = f.zr.(zlib.Resetter).Reset(&f.src, nil)
	}
	if err != nil {
		return false, 0, err
	}
	kept := 0
	for {
		m, rerr := f.zr.Read(f.buf[kept:])
		n += int64(m)
		if n > limit {
			return false, n, errors.New("object streams over the inflate bound")
		}
		if mentionsAttachment(f.buf[:kept+m]) {
			return true, n, nil
		}
		if kept += m; kept > mentionOverlap {
			copy(f.buf, f.buf[kept-mentionOverlap:kept])
			kept = mentionOverlap
		}
		if rerr == io.EOF {
			return false, n, nil
		}
		if rerr != nil {
			return false, n, rerr // a truncated or corrupt stream: pdfdetach decides
		}
	}
}
