package opentrans

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// CharsetReader (an xml.Decoder.CharsetReader) lets Read, and the readers of
// attached business documents, accept documents declared as ISO-8859-1, Latin-1,
// Windows-1252 or ISO-8859-15 besides UTF-8 (encoding/xml alone only reads
// UTF-8). Partner files are often mislabelled: the official openTRANS samples
// declare ISO-8859-1 and are UTF-8. So a document whose bytes are valid UTF-8
// is read as UTF-8 whatever it declares; otherwise the declared single-byte
// charset applies. ISO-8859-1 is read as Windows-1252, as browsers do: the
// two differ only in C1 control codes, which documents never mean.
func CharsetReader(label string, input io.Reader) (io.Reader, error) {
	var table *[32]rune
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1", "windows-1252", "cp1252":
		table = &cp1252
	case "iso-8859-15", "iso8859-15", "latin-9", "latin9":
		table = nil
	default:
		return nil, fmt.Errorf("unsupported encoding %q", label)
	}
	raw, err := io.ReadAll(input)
	if err != nil {
		return nil, err
	}
	if utf8.Valid(raw) {
		return bytes.NewReader(raw), nil
	}
	var b strings.Builder
	b.Grow(len(raw) * 2)
	for _, c := range raw {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case table != nil && c < 0xA0:
			b.WriteRune(table[c-0x80])
		case table == nil:
			b.WriteRune(latin9(c))
		default:
			b.WriteRune(rune(c))
		}
	}
	return strings.NewReader(b.String()), nil
}

// cp1252 maps the bytes 0x80-0x9F of Windows-1252; undefined ones to U+FFFD.
var cp1252 = [32]rune{
	'€', '\uFFFD', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\uFFFD', 'Ž', '\uFFFD',
	'\uFFFD', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\uFFFD', 'ž', 'Ÿ',
}

// latin9 decodes one ISO-8859-15 byte (ISO-8859-1 with eight code points
// replaced, among them the euro sign).
func latin9(c byte) rune {
	switch c {
	case 0xA4:
		return '€'
	case 0xA6:
		return 'Š'
	case 0xA8:
		return 'š'
	case 0xB4:
		return 'Ž'
	case 0xB8:
		return 'ž'
	case 0xBC:
		return 'Œ'
	case 0xBD:
		return 'œ'
	case 0xBE:
		return 'Ÿ'
	}
	return rune(c)
}
