package draft

import (
	"regexp"
	"strings"
	"unicode"
)

// cell is a run of text on one line separated from its neighbours by two or
// more spaces or a box-drawing bar; columns are rune offsets.
type cell struct {
	Text       string
	Start, End int
}

// token is a whitespace-separated word with its rune offsets.
type token struct {
	Text       string
	Start, End int
}

// splitLines splits a layout text into lines; form feeds (page breaks)
// become line breaks.
func splitLines(text string) []string {
	text = strings.ReplaceAll(text, "\r", "")
	return strings.Split(strings.ReplaceAll(text, "\f", "\n"), "\n")
}

// cells splits a line at runs of two or more blanks and at '|' bars.
func cells(line string) []cell {
	rs := []rune(line)
	var out []cell
	i := 0
	for i < len(rs) {
		for i < len(rs) && (isBlank(rs[i]) || rs[i] == '|') {
			i++
		}
		if i >= len(rs) {
			break
		}
		start := i
		end := i
		for i < len(rs) && rs[i] != '|' {
			if isBlank(rs[i]) {
				j := i
				for j < len(rs) && isBlank(rs[j]) {
					j++
				}
				if j-i >= 2 || j >= len(rs) || rs[j] == '|' {
					break
				}
				i = j
				continue
			}
			i++
			end = i
		}
		out = append(out, cell{Text: string(rs[start:end]), Start: start, End: end})
	}
	return out
}

// tokens splits a line at blanks and bars.
func tokens(line string) []token {
	rs := []rune(line)
	var out []token
	i := 0
	for i < len(rs) {
		for i < len(rs) && (isBlank(rs[i]) || rs[i] == '|') {
			i++
		}
		start := i
		for i < len(rs) && !isBlank(rs[i]) && rs[i] != '|' {
			i++
		}
		if i > start {
			out = append(out, token{Text: string(rs[start:i]), Start: start, End: i})
		}
	}
	return out
}

func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\u00a0' || r == '\u202f' }

// indent is the column of the first non-blank rune, -1 for a blank line.
func indent(line string) int {
	for i, r := range []rune(line) {
		if !isBlank(r) && r != '|' {
			return i
		}
	}
	return -1
}

func blank(line string) bool { return indent(line) < 0 }

// literal turns printed text into a regex that matches it with any run of
// blanks where one was printed.
func literal(s string) string {
	var b strings.Builder
	for i, part := range strings.Fields(s) {
		if i > 0 {
			b.WriteString(`\s+`)
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	return b.String()
}

// wordStart prefixes \b when the text starts with an ASCII letter or digit,
// so a label "TOTAL" does not match inside "SUBTOTAL". (\b is ASCII in RE2;
// before "É" it would never match.)
func wordStart(s string) string {
	if s != "" && asciiWord(rune(s[0])) {
		return `\b`
	}
	return ""
}

// wordEnd suffixes \b when the text ends with an ASCII letter or digit.
func wordEnd(s string) string {
	if s != "" && asciiWord(rune(s[len(s)-1])) {
		return `\b`
	}
	return ""
}

func asciiWord(r rune) bool { return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool {
	for _, r := range s {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// fold lower-cases s for label comparison.
func fold(s string) string { return strings.ToLower(s) }
