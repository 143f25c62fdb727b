// Package generic reads a purchase order without a template: header fields
// by their labels (in several languages), the item table by its column
// vocabulary, numbers and dates in the document's own conventions. It is
// deterministic and offline, and it decides by self-verification: a reading
// is a success only when what the document prints closes (line arithmetic,
// totals, exactly one order id); anything else is a rejection with the
// contract's reason and a detail naming what was uncertain.
//
// The reader works on the layout text of the pages (pdftotext -layout, pages
// separated by form feeds), treating each word as a box on the page's
// character grid: page, line, first and last column. Every value it keeps
// carries that position and the label it anchored on.
package generic

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// Name is the built-in template name that routes a document to the reader
// (upload field template=generic).
const Name = "generic"

// Options tune one reading.
type Options struct {
	// Debug keeps every candidate considered (Result.Candidates).
	Debug bool
	// ReceivedAt is when the document arrived: an order date after it
	// (a day of time zones allowed) is a rejection. Zero skips the check.
	ReceivedAt time.Time
}

// Position is where a value was read: page (1-based), line on the page
// (0-based), first column and length in runes on that line of the layout
// text, and the label text it was anchored on ("" for table cells and
// titles).
type Position struct {
	Page, Line, Col, Len int
	Label                string
}

// Field is one value the reader kept: the canonical field name
// ("order_id", "order_date", "currency", "net_total", "items[2].quantity",
// …), the value in canonical form, and where it was read.
type Field struct {
	Name  string
	Value string
	At    Position
}

// Candidate is one value considered for a field, kept or dropped, and why
// (the debug output).
type Candidate struct {
	Field string
	Value string
	At    Position
	Kept  bool
	Why   string
}

// Result is one reading.
type Result struct {
	// Order is what was read. On a rejection it holds as much as could be
	// read (for a person to correct); only a success proves it.
	Order *order.Order
	// Outcome is success, or rejected with the contract's reason and a
	// detail naming what was uncertain.
	Outcome *template.Outcome
	// Fields are the kept values with their positions.
	Fields []Field
	// Candidates are every value considered (Options.Debug only).
	Candidates []Candidate
}

// Run returns the reading in the shape template runs have, for callers
// that handle both.
func (r *Result) Run() *template.Run {
	return &template.Run{Order: r.Order, Outcome: r.Outcome}
}

// Read reads the layout text of a document (pages separated by form
// feeds). Errors are ctx's only: a document that cannot be read as an order
// is a rejected Result, not an error.
func Read(ctx context.Context, text string, opts Options) (*Result, error) {
	return read(ctx, text, opts)
}
