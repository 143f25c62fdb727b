package pdftext

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Damage reports and decompression bombs: what a reader of a broken or
// hostile PDF must know besides its text.
//
// poppler repairs a broken PDF as far as it can and reads it: a page tree
// that contains itself, a stream whose /Length points past the end of the
// file, a cross-reference table it has to rebuild. Its text is then what
// was left after the repair, and may be a fragment, a page twice or text
// from a stream that never ended. Text.Damage carries poppler's own
// reports of such repairs, so a caller can refuse to base a verdict about
// what the document is on that text.

// damageMarkers are the parts of poppler's messages that report a repair of
// the document's structure. Other messages (a font it could not find, an
// operator it does not know, also where a wrong stream length made it read
// the file's "xref" keyword as one) leave the text as printed and are not
// damage.
var damageMarkers = []string{
	"loop in pages tree",
	"incorrect stream length",
	"xref table",
	"xref entry",
	"xref num",
	"reconstruct",
	"trailer dictionary",
	"page count in top-level pages object",
	"kids object",
	"flate stream",
	"end of file inside",
	"unexpected end of file",
}

// popplerPrefix is how poppler starts a message: "Syntax Error (370): ",
// "Syntax Error: " from pdftotext, "error (370): " from poppler-cpp.
var popplerPrefix = regexp.MustCompile(`^(?i)[a-z/ ]*(?:error|warning)(?: \(-?\d+\))?: `)

// maxDamage bounds how many repairs are reported for one document.
const maxDamage = 5

// damageOf returns the messages among poppler's that report a structural
// repair, without poppler's prefix, each once, at most maxDamage.
func damageOf(messages []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range messages {
		m = strings.TrimSpace(popplerPrefix.ReplaceAllString(strings.TrimSpace(m), ""))
		lm := strings.ToLower(m)
		for _, k := range damageMarkers {
			if strings.Contains(lm, k) && !seen[m] && len(out) < maxDamage {
				seen[m] = true
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// maxInflate is the most the streams of a PDF may inflate to, together,
// before the PDF counts as a decompression bomb. poppler inflates content
// streams without a limit: bad_flate_bomb.pdf of the shared corpus (1 MiB
// that inflates to 1 GiB) holds a poppler engine 10 to 17 s per attempt
// before its text comes out, and the same gigabyte split into streams of
// 100 MiB passed a per-stream limit. No document's content comes near it
// (a whole document's text is capped at DefaultMaxOutputBytes).
const maxInflate = 128 << 20

// maxDeflateRatio is the most deflate expands (about 1032:1): streams whose
// compressed sizes add up to less than maxInflate/maxDeflateRatio cannot
// exceed maxInflate and are not inflated, so screening an ordinary PDF
// costs a scan of its bytes.
const maxDeflateRatio = 1032

// errBomb marks a decompression bomb (wrapped with ErrUnreadable): the auto
// engine does not hand such a PDF to its fallback either.
var errBomb = errors.New("decompression bomb")

// screen refuses a PDF whose streams inflate past maxInflate together,
// before a poppler engine spends its deadline inflating them. Image
// streams are left alone: text extraction does not decode them. A stream
// that is not zlib data, or whose data breaks off, counts for what it
// inflated to.
func screen(pdf []byte) error {
	spans, total := streamSpans(pdf)
	if total*maxDeflateRatio <= maxInflate {
		return nil
	}
	budget := int64(maxInflate)
	for _, s := range spans {
		if budget -= inflated(pdf[s[0]:s[1]], budget+1); budget < 0 {
			return fmt.Errorf("%w: %w: its streams inflate to more than %d MiB (the one at byte %d passed the limit)",
				ErrUnreadable, errBomb, maxInflate>>20, s[0])
		}
	}
	return nil
}

// streamSpans returns the data of the PDF's streams that are not images,
// as [start, end) offsets, and their total size.
func streamSpans(pdf []byte) (spans [][2]int, total int64) {
	for off := 0; ; {
		i := bytes.Index(pdf[off:], []byte("stream"))
		if i < 0 {
			return spans, total
		}
		kw := off + i
		data := kw + len("stream")
		if kw >= 3 && string(pdf[kw-3:kw]) == "end" {
			off = data // "endstream" ends a stream
			continue
		}
		if data < len(pdf) && pdf[data] == '\r' {
			data++
		}
		if data < len(pdf) && pdf[data] == '\n' {
			data++
		}
		end := bytes.Index(pdf[data:], []byte("endstream"))
		if end < 0 {
			end = len(pdf) - data
		}
		if !imageDict(pdf[max(0, kw-4096):kw]) {
			spans = append(spans, [2]int{data, data + end})
			total += int64(end)
		}
		off = data + end
	}
}

// imageDict reports whether the object before a stream keyword (the bytes
// from its "obj") is an image XObject.
func imageDict(before []byte) bool {
	if i := bytes.LastIndex(before, []byte("obj")); i >= 0 {
		before = before[i:]
	}
	return bytes.Contains(before, []byte("/Image"))
}

// inflated is how many bytes zlib data inflates to, counted up to limit.
func inflated(data []byte, limit int64) int64 {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0
	}
	defer zr.Close()
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, limit))
	return n
}
