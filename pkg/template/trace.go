package template

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Trace is the debug view of one extraction (intakectl --output debug):
// which templates were tried and why they failed, every field with its
// regexes, matches and parsed value, and every line block.
type Trace struct {
	Templates []TemplateTrace
	Template  string // the template that extracted
	Prepared  string // the text after the template's options
	Fields    []FieldTrace
	Blocks    []BlockTrace
	Checks    []string // canonical checks made by Order (reasons, mappings)
	Rows      []RowTrace
}

// RowTrace is one item row as the canonical order read it: its values as
// printed and the errors of those that did not convert.
type RowTrace struct {
	Index  int
	Values [][2]string // key, printed text
	Errors []string
}

// TemplateTrace is one template tried during selection.
type TemplateTrace struct {
	Name     string
	File     string
	Priority int
	Matched  bool
	Keywords KeywordTrace
}

// FieldTrace is one field's extraction.
type FieldTrace struct {
	Name, Parser, Type, Group string
	Regexes                   []string
	Matches                   []string
	Value                     any
	Err                       string
}

// BlockTrace is one lines block or table.
type BlockTrace struct {
	Field      string
	Rule       int
	Start, End string
	Lines      []LineTrace
	// NotFound is "start" when the start regex matched nowhere (no block
	// was read) and "end" when no end followed a start; "" for a block
	// that was read.
	NotFound string
}

// missingBlock records that rule ri of the lines field name read no block
// because its start ("start") or its end ("end") regex did not match. A nil
// trace records nothing.
func (t *Trace) missingBlock(name string, ri int, r *LinesRule, which string) {
	if t != nil {
		t.Blocks = append(t.Blocks, BlockTrace{Field: name, Rule: ri, Start: r.Start.Source, End: r.End.Source, NotFound: which})
	}
}

// LineTrace is one line of a block and what it matched.
type LineTrace struct {
	Text    string
	Kind    string // first_line, line, last_line, skip_line, body, no match, ignored (before first_line)
	Pattern string
}

// WriteText renders the trace for people.
func (t *Trace) WriteText(w io.Writer) error {
	var b bytes.Buffer
	if len(t.Templates) > 0 {
		b.WriteString("== templates tried (highest priority first)\n")
		for _, tt := range t.Templates {
			status := "matched"
			switch {
			case len(tt.Keywords.Failed) > 0:
				status = "keywords not found: " + quoteAll(tt.Keywords.Failed)
			case tt.Keywords.ExcludeHit != "":
				status = "exclude keyword found: " + fmt.Sprintf("%q", tt.Keywords.ExcludeHit)
			}
			fmt.Fprintf(&b, "  %-30s priority %-3d %s (%s)\n", tt.Name, tt.Priority, status, tt.File)
		}
	}
	if t.Template != "" {
		fmt.Fprintf(&b, "== template %s\n", t.Template)
	}
	if len(t.Fields) > 0 {
		b.WriteString("== fields\n")
		for _, f := range t.Fields {
			writeFieldTrace(&b, f)
		}
	}
	for _, bl := range t.Blocks {
		switch bl.NotFound {
		case "start":
			fmt.Fprintf(&b, "== block %s (rule %d): start %q never matched; no rows read from it\n", bl.Field, bl.Rule, bl.Start)
			continue
		case "end":
			fmt.Fprintf(&b, "== block %s (rule %d): start %q matched, but end %q was not found after it; the block was not read\n", bl.Field, bl.Rule, bl.Start, bl.End)
			continue
		}
		fmt.Fprintf(&b, "== block %s (rule %d) start %q end %q\n", bl.Field, bl.Rule, bl.Start, bl.End)
		for _, l := range bl.Lines {
			fmt.Fprintf(&b, "  %-28s %q", l.Kind, l.Text)
			if l.Pattern != "" {
				fmt.Fprintf(&b, "  ← %s", l.Pattern)
			}
			b.WriteByte('\n')
		}
	}
	if len(t.Rows) > 0 {
		b.WriteString("== items (values as printed)\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "  lines[%d]", r.Index)
			for _, kv := range r.Values {
				fmt.Fprintf(&b, " %s=%q", kv[0], kv[1])
			}
			b.WriteByte('\n')
			for _, e := range r.Errors {
				fmt.Fprintf(&b, "    error   %s\n", e)
			}
		}
	}
	if len(t.Checks) > 0 {
		b.WriteString("== checks\n")
		for _, c := range t.Checks {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeFieldTrace writes one field of the debug view: its parser, type and
// group, its regexes, what they matched, its error and its value.
func writeFieldTrace(b *bytes.Buffer, f FieldTrace) {
	fmt.Fprintf(b, "  %s (parser %s", f.Name, f.Parser)
	if f.Type != "" {
		fmt.Fprintf(b, ", type %s", f.Type)
	}
	if f.Group != "" {
		fmt.Fprintf(b, ", group %s", f.Group)
	}
	b.WriteString(")\n")
	for _, r := range f.Regexes {
		fmt.Fprintf(b, "    regex   %s\n", r)
	}
	if f.Parser == string(ParserRegex) {
		if len(f.Matches) == 0 {
			b.WriteString("    matches (none)\n")
		} else {
			fmt.Fprintf(b, "    matches %s\n", quoteAll(f.Matches))
		}
	}
	if f.Err != "" {
		fmt.Fprintf(b, "    error   %s\n", f.Err)
	}
	if f.Parser != string(ParserLines) {
		v, _ := renderValue(f.Value)
		fmt.Fprintf(b, "    value   %s\n", v)
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func renderValue(v any) (string, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, v, "    "); err != nil {
		return fmt.Sprint(v), err
	}
	return b.String(), nil
}
