package opentrans

import (
	"encoding/xml"
	"io"
)

// node is an element of the document being written. Building the whole tree
// before encoding lets Write check the model completely and return an error
// without having written half a document to w.
type node struct {
	name  string
	attrs []xml.Attr
	text  string
	kids  []*node
}

// el returns an element with the non-nil kids; nil when it has none, so that
// optional containers vanish when empty.
func el(name string, kids ...*node) *node {
	n := &node{name: name}
	for _, k := range kids {
		if k != nil {
			n.kids = append(n.kids, k)
		}
	}
	if len(n.kids) == 0 {
		return nil
	}
	return n
}

// leaf returns a text element, or nil when text is empty (every openTRANS
// string element has minLength 1).
func leaf(name, text string, attrs ...string) *node {
	if text == "" {
		return nil
	}
	n := &node{name: name, text: text}
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i+1] != "" {
			n.attrs = append(n.attrs, xml.Attr{Name: xml.Name{Local: attrs[i]}, Value: attrs[i+1]})
		}
	}
	return n
}

func (n *node) add(kids ...*node) {
	for _, k := range kids {
		if k != nil {
			n.kids = append(n.kids, k)
		}
	}
}

// encode writes n with the namespace prefixes spelled out in the names
// ("bmecat:NAME"); encoding/xml's own namespace handling would invent
// prefixes, and partners expect bmecat: as in the standard's examples.
func (n *node) encode(e *xml.Encoder) error {
	start := xml.StartElement{Name: xml.Name{Local: n.name}, Attr: n.attrs}
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if n.text != "" {
		if err := e.EncodeToken(xml.CharData(n.text)); err != nil {
			return err
		}
	}
	for _, k := range n.kids {
		if err := k.encode(e); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

func encodeDocument(w io.Writer, root *node) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	e := xml.NewEncoder(w)
	e.Indent("", "  ")
	if err := root.encode(e); err != nil {
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
