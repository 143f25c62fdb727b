package embedded

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/docintake/docintake/pkg/opentrans"
	"io"
	"strings"
)

// Limits of the XML reader. Real Order-X, Factur-X and UBL documents nest
// about 12 levels deep and carry a few thousand elements per megabyte; the
// caps are far above that and far below what exhausts memory or time.
const (
	maxDepth    = 64
	maxElements = 500_000
	maxAttrs    = 64
)

// ErrHostile marks an attachment refused by the XML reader's safety rules:
// a DTD (and with it every entity declaration), an undefined entity, too deep
// nesting, too many elements or attributes.
var ErrHostile = errors.New("hostile xml")

// elem is one element of a parsed attachment. The tree keeps what the
// mappers read: local names, namespace, attributes and the element's own
// text.
type elem struct {
	space, name string
	attrs       []xml.Attr
	text        string
	kids        []*elem
}

// parseXML reads data into a tree. It refuses DOCTYPE declarations outright
// (encoding/xml never fetches external entities, but a DTD has no business
// in these standards and is the carrier of entity-expansion bombs), leaves
// encoding/xml's strict mode on (an entity it does not know is an error, so
// nothing expands), and bounds depth and element count. ctx is checked as
// it goes, so a cancelled document stops parsing.
func parseXML(ctx context.Context, data []byte) (*elem, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = opentrans.CharsetReader // mislabelled UTF-8 and Windows-1252 too
	var root *elem
	var stack []*elem
	var text []*strings.Builder
	count := 0
	for {
		if count%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, fmt.Errorf("%w: DOCTYPE or other declaration <!%.40s", ErrHostile, t)
		case xml.StartElement:
			count++
			if count > maxElements {
				return nil, fmt.Errorf("%w: more than %d elements", ErrHostile, maxElements)
			}
			if len(stack) >= maxDepth {
				return nil, fmt.Errorf("%w: nesting deeper than %d", ErrHostile, maxDepth)
			}
			if len(t.Attr) > maxAttrs {
				return nil, fmt.Errorf("%w: more than %d attributes on <%s>", ErrHostile, maxAttrs, t.Name.Local)
			}
			e := &elem{space: t.Name.Space, name: t.Name.Local, attrs: t.Attr}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("xml: more than one root element")
				}
				root = e
			} else {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, e)
			}
			stack = append(stack, e)
			text = append(text, &strings.Builder{})
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, errors.New("xml: unbalanced end element")
			}
			e := stack[len(stack)-1]
			if e.name != t.Name.Local || e.space != t.Name.Space {
				return nil, fmt.Errorf("xml: </%s> closes <%s>", t.Name.Local, e.name)
			}
			e.text = strings.TrimSpace(text[len(text)-1].String())
			stack, text = stack[:len(stack)-1], text[:len(text)-1]
		case xml.CharData:
			if len(text) > 0 {
				text[len(text)-1].Write(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("xml: no root element")
	}
	if len(stack) > 0 {
		return nil, errors.New("xml: unexpected end of document")
	}
	return root, nil
}

// kid returns the first child with local name name (nil when there is none;
// every accessor accepts a nil receiver, so paths through missing elements
// end in empty values instead of checks at every step).
func (e *elem) kid(name string) *elem {
	if e == nil {
		return nil
	}
	for _, k := range e.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// at follows a path of local names.
func (e *elem) at(path ...string) *elem {
	for _, p := range path {
		e = e.kid(p)
	}
	return e
}

// str is the text at path.
func (e *elem) str(path ...string) string {
	if e = e.at(path...); e == nil {
		return ""
	}
	return e.text
}

// all returns the children named name.
func (e *elem) all(name string) []*elem {
	if e == nil {
		return nil
	}
	var out []*elem
	for _, k := range e.kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

// attr is the value of the attribute with local name name.
func (e *elem) attr(name string) string {
	if e == nil {
		return ""
	}
	for _, a := range e.attrs {
		if a.Name.Local == name {
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// ns resolves the element's namespace prefix (RawToken leaves prefixes
// unresolved) by looking for its xmlns declaration on the element itself;
// the mappers only ask this of the root, where the standards declare them.
func (e *elem) ns() string {
	for _, a := range e.attrs {
		if (a.Name.Space == "xmlns" && a.Name.Local == e.space) || (e.space == "" && a.Name.Space == "" && a.Name.Local == "xmlns") {
			return a.Value
		}
	}
	return ""
}
