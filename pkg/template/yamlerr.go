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
	type block struct {
		indent int
		key    string
	}
	var stack []block
	var flow []*flowFrame
	var quote byte
	ownerIndent := 0
	keyPath := func() string {
		parts := make([]string, len(stack))
		for i, b := range stack {
			parts[i] = b.key
		}
		return strings.Join(parts, ".")
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		ln := i + 1
		rest := l
		if len(flow) == 0 {
			trimmed := strings.TrimSpace(l)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			m := blockKey.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			indent := len(m[1])
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, block{indent, strings.Trim(m[2], `"'`)})
			rest = strings.TrimLeft(m[3], " ")
			if rest == "" || (rest[0] != '{' && rest[0] != '[') {
				continue
			}
			ownerIndent = indent
		} else if m := blockKey.FindStringSubmatch(l); m != nil && quote == 0 && len(m[1]) <= ownerIndent {
			f := flow[0]
			return f.line, f.path, fmt.Sprintf("the flow %s opened here is not closed with %q", flowName(f.open), closer(f.open)), true
		}
		for j := 0; j < len(rest); j++ {
			c := rest[j]
			if quote != 0 {
				switch {
				case quote == '\'' && c == '\'' && j+1 < len(rest) && rest[j+1] == '\'':
					j++
				case quote == '"' && c == '\\':
					j++
				case c == quote:
					quote = 0
				}
				continue
			}
			var top *flowFrame
			if len(flow) > 0 {
				top = flow[len(flow)-1]
				top.start = min(top.start, j)
			}
			switch {
			case c == '#' && (j == 0 || rest[j-1] == ' '):
				j = len(rest)
			case (c == '\'' || c == '"') && top != nil && strings.TrimSpace(rest[top.start:j]) == "":
				quote = c
			case c == '{' || c == '[':
				p := keyPath()
				if top != nil {
					p = top.path
					if top.key != "" {
						p += "." + top.key
					}
				}
				flow = append(flow, &flowFrame{open: c, line: ln, path: p, start: j + 1})
			case c == '}' || c == ']':
				if top == nil {
					return ln, keyPath(), fmt.Sprintf("%q closes nothing", c), true
				}
				if c != closer(top.open) {
					return ln, top.path, fmt.Sprintf("the flow %s opened on line %d ends with %q instead of %q", flowName(top.open), top.line, c, closer(top.open)), true
				}
				flow = flow[:len(flow)-1]
				if len(flow) > 0 {
					flow[len(flow)-1].start = j + 1
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
		for _, f := range flow {
			f.start = 0
		}
	}
	if len(flow) > 0 {
		f := flow[0]
		return f.line, f.path, fmt.Sprintf("the flow %s opened here is not closed with %q", flowName(f.open), closer(f.open)), true
	}
	return 0, "", "", false
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
