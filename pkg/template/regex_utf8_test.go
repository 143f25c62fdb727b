package template

import "testing"

// TestBacktrackingInvalidUTF8 checks that matches of the backtracking
// engine map back to byte offsets in a text with invalid UTF-8 (each
// invalid byte is one U+FFFD rune of one byte).
func TestBacktrackingInvalidUTF8(t *testing.T) {
	t.Parallel()
	r, err := CompileRegex(`(?<=a)(b)`)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Backtracking() {
		t.Fatal("lookbehind should run on the backtracking engine")
	}
	for text, want := range map[string]string{
		"\xffab\xfe":     "\xffabc\xfe",
		"é\xc3ab ab":     "é\xc3abc abc",
		"\xe2\x84ab\xff": "\xe2\x84abc\xff",
	} {
		got, err := r.sub(nil, text, `\1c`)
		if err != nil || got != want {
			t.Errorf("sub(%q) = %q, %v; want %q", text, got, err, want)
		}
	}
}
