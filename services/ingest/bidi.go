package ingest

import (
	"fmt"
	"strings"
	"unicode"
)

// isBidiControl reports the invisible characters that reorder the text
// around them (U+202E RIGHT-TO-LEFT OVERRIDE, isolates, marks): a file named
// "order\u202Egpj.pdf" displays as "orderfdp.jpg", so a client could make a
// document look like another one in the ops console or a log viewer.
func isBidiControl(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }

// showBidi writes bidi controls in client-supplied text as visible escapes
// (<U+202E>) for the ops console: names stored before uploads stripped
// them, and message ids and subjects keep them, so the console must not let
// them reorder what it shows.
func showBidi(s string) string {
	if strings.IndexFunc(s, isBidiControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isBidiControl(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
