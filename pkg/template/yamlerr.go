package template

import (
	"fmt"
	"regexp"
	"strings"
)

// yaml.v3 reports a broken flow collection ({…} or […]) at a line that is
// often not the one to fix and without the key. locateFlowError rescans the
// text for the usual mistakes in flow style and names the line and key path:
// a collection not closed, a closer of the wrong kind, and a plain value
// that contains ": " (which YAML reads as a second key).

var blockKey = regexp.MustCompile(`^( *)(?:- +)?("[^"]*"|'[^']*'|[^\s#'"{\[\]},:-][^#:]*?|-[^\s#:][^#:]*?) *:(?: +|$)(.*)$`)

type flowFrame struct {
	open  byte
	line  int
	path  string
	key   string // current entry's key in a flow mapping
	colon bool   // the current entry has had its key/value colon
	start int    // start of the current entry's text
}

// locateFlowError returns the line and key path of the first flow-style
// mistake in data and a hint, or ok false when it finds none.
func locateFlowError(data []byte) (line int, path, hint string, ok bool) {
	var s flowScanner
	for i, l := range strings.Split(string(data), "\n") {
		ln := i + 1
		rest := l
		if len(s.flow) == 0 {
			var opens bool
			if rest, opens = s.blockLine(l); !opens {
				continue
			}
		} else if m := blockKey.FindStringSubmatch(l); m != nil && s.quote == 0 && len(m[1]) <= s.ownerIndent {
			// A block key at or left of the flow's owner: the flow ended
			// without its closer.
			return s.unclosed()
		}
		if line, path, hint, ok := s.scan(rest, ln); ok {
			return line, path, hint, true
		}
		for _, f := range s.flow {
			f.start = 0
		}
	}
	if len(s.flow) > 0 {
		return s.unclosed()
	}
	return 0, "", "", false
}

// flowScanner is locateFlowError's state from line to line: the block
// keys above the current line, the flow collections open and the quote a
// flow value is in.
type flowScanner struct {
	stack       []blockKeyAt
	flow        []*flowFrame
	quote       byte
	ownerIndent int // indent of the block key whose value is the open flow
}

type blockKeyAt struct {
	indent int
	key    string
}

func (s *flowScanner) keyPath() string {
	parts := make([]string, len(s.stack))
	for i, b := range s.stack {
		parts[i] = b.key
	}
	return strings.Join(parts, ".")
}

// blockLine reads a line outside any flow collection: a block key updates
// the key path, and when its value opens a flow collection blockLine
// returns the value to scan and opens true.
func (s *flowScanner) blockLine(l string) (rest string, opens bool) {
	trimmed := strings.TrimSpace(l)
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return "", false
	}
	m := blockKey.FindStringSubmatch(l)
	if m == nil {
		return "", false
	}
	indent := len(m[1])
	for len(s.stack) > 0 && s.stack[len(s.stack)-1].indent >= indent {
		s.stack = s.stack[:len(s.stack)-1]
	}
	s.stack = append(s.stack, blockKeyAt{indent, strings.Trim(m[2], `"'`)})
	rest = strings.TrimLeft(m[3], " ")
	if rest == "" || (rest[0] != '{' && rest[0] != '[') {
		return "", false
	}
	s.ownerIndent = indent
	return rest, true
}

// scan follows the flow collections through rest, line ln, and reports
// the first mistake it finds.
func (s *flowScanner) scan(rest string, ln int) (line int, path, hint string, ok bool) {
	for j := 0; j < len(rest); j++ {
		c := rest[j]
		if s.quote != 0 {
			switch {
			case s.quote == '\'' && c == '\'' && j+1 < len(rest) && rest[j+1] == '\'':
				j++
			case s.quote == '"' && c == '\\':
				j++
			case c == s.quote:
				s.quote = 0
			}
			continue
		}
		var top *flowFrame
		if len(s.flow) > 0 {
			top = s.flow[len(s.flow)-1]
			top.start = min(top.start, j)
		}
		switch {
		case c == '#' && (j == 0 || rest[j-1] == ' '):
			j = len(rest)
		case (c == '\'' || c == '"') && top != nil && strings.TrimSpace(rest[top.start:j]) == "":
			s.quote = c
		case c == '{' || c == '[':
			p := s.keyPath()
			if top != nil {
				p = top.path
				if top.key != "" {
					p += "." + top.key
				}
			}
			s.flow = append(s.flow, &flowFrame{open: c, line: ln, path: p, start: j + 1})
		case c == '}' || c == ']':
			if top == nil {
				return ln, s.keyPath(), fmt.Sprintf("%q closes nothing", c), true
			}
			if c != closer(top.open) {
				return ln, top.path, fmt.Sprintf("the flow %s opened on line %d ends with %q instead of %q", flowName(top.open), top.line, c, closer(top.open)), true
			}
			s.flow = s.flow[:len(s.flow)-1]
			if len(s.flow) > 0 {
				s.flow[len(s.flow)-1].start = j + 1
			}
		case c == ',' && top != nil:
			top.key, top.colon, top.start = "", false, j+1
		case c == ':' && top != nil && top.open == '{' && (j+1 == len(rest) || rest[j+1] == ' '):
			if top.colon {
				return ln, top.path + "." + top.key, "the value contains \": \", which YAML reads as another key; quote the value", true
			}
			top.key, top.colon, top.start = strings.Trim(strings.TrimSpace(rest[top.start:j]), `"'`), true, j+1
		}
	}
	return 0, "", "", false
}

// unclosed reports the outermost open flow collection as not closed.
func (s *flowScanner) unclosed() (line int, path, hint string, ok bool) {
	f := s.flow[0]
	return f.line, f.path, fmt.Sprintf("the flow %s opened here is not closed with %q", flowName(f.open), closer(f.open)), true
}

func closer(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

func flowName(open byte) string {
	if open == '{' {
		return "mapping {"
	}
	return "sequence ["
}
