package pricelist

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
)

// Problem is one thing wrong with an imported CSV: the line (the header is
// line 1), the column ("" for the whole row) and what is wrong.
type Problem struct {
	Line    int    `json:"line"`
	Column  string `json:"column,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Column == "" {
		return fmt.Sprintf("line %d: %s", p.Line, p.Message)
	}
	return fmt.Sprintf("line %d, column %s: %s", p.Line, p.Column, p.Message)
}

// Error is an invalid CSV: every problem found (at most MaxProblems, and how
// many more there were). Nothing of such a file is imported.
type Error struct {
	Problems []Problem
	More     int
}

func (e *Error) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.String()
	}
	s := "invalid price list: " + strings.Join(msgs, "; ")
	if e.More > 0 {
		s += fmt.Sprintf("; and %d more problems", e.More)
	}
	return s
}

// problems collects an import's problems up to MaxProblems.
type problems struct{ Error }

func (ps *problems) add(line int, column, format string, args ...any) {
	if len(ps.Problems) >= MaxProblems {
		ps.More++
		return
	}
	ps.Problems = append(ps.Problems, Problem{Line: line, Column: column, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) err() error {
	if len(ps.Problems) == 0 {
		return nil
	}
	return &ps.Error
}

// Parse reads a price list CSV: the header exactly as Columns (a UTF-8 byte
// order mark before it is allowed), then one entry per line. Every row is
// validated and every problem reported (*Error), so one import shows all
// there is to fix. At most maxRows entries (0: DefaultMaxRows).
func Parse(r io.Reader, maxRows int) ([]Entry, error) {
	if maxRows <= 0 {
		maxRows = DefaultMaxRows
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // a wrong count is reported per line
	var ps problems
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		ps.add(1, "", "the file is empty; the first line must be the header %s", Header)
		return nil, ps.err()
	}
	if err != nil {
		ps.add(csvLine(err), "", "not CSV: %v", csvCause(err))
		return nil, ps.err()
	}
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\uFEFF")
	}
	if strings.Join(head, ",") != Header {
		ps.add(1, "", "the header must be exactly %s, not %s", Header, strings.Join(head, ","))
		return nil, ps.err()
	}
	var out []Entry
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ps.add(csvLine(err), "", "not CSV: %v", csvCause(err))
			return nil, ps.err()
		}
		line, _ := cr.FieldPos(0)
		if len(out) == maxRows {
			ps.add(line, "", "more than %d entries; split the list by buyer", maxRows)
			return nil, ps.err()
		}
		if e, ok := parseRow(rec, line, &ps); ok {
			out = append(out, e)
		}
	}
	if len(out) == 0 && len(ps.Problems) == 0 {
		ps.add(1, "", "no entries after the header (to remove a price list, delete it)")
	}
	checkOverlaps(out, &ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return out, nil
}

func csvLine(err error) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return 0
}

func csvCause(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseRow validates one data row; ok is false when it had a problem.
func parseRow(rec []string, line int, ps *problems) (Entry, bool) {
	if len(rec) != len(Columns) {
		ps.add(line, "", "%d columns, want %d (%s)", len(rec), len(Columns), Header)
		return Entry{}, false
	}
	before := len(ps.Problems) + ps.More
	f := func(i int) string { return strings.TrimSpace(rec[i]) }
	e := Entry{Line: line, Article: f(0), Currency: strings.ToUpper(f(1)), Unit: f(4)}
	switch {
	case e.Article == "":
		ps.add(line, "article", "empty: the buyer's or the supplier's article number is required")
	case len(e.Article) > 200 || strings.IndexFunc(e.Article, unicode.IsControl) >= 0:
		ps.add(line, "article", "%q is not an article number (at most 200 characters, no control characters)", e.Article)
	}
	if !isCurrency(e.Currency) {
		ps.add(line, "currency", "%q is not a currency code (three letters, ISO 4217, such as EUR)", f(1))
	}
	e.UnitPrice = decimal(line, "unit_price", f(2), "", ps)
	e.PriceBasis = decimal(line, "price_basis", f(3), "1", ps)
	e.TolerancePct = decimal(line, "tolerance_pct", f(7), "0", ps)
	if r := order.Rat(e.PriceBasis); r != nil && r.Sign() <= 0 {
		ps.add(line, "price_basis", "%s: the price basis (how many units the price is for) must be more than 0", e.PriceBasis)
	}
	if r := order.Rat(e.TolerancePct); r != nil && r.Cmp(order.Rat("100")) > 0 {
		ps.add(line, "tolerance_pct", "%s: a tolerance is a percentage from 0 to 100", e.TolerancePct)
	}
	if e.Unit != "" {
		if _, ok := opentrans.UnitCode(e.Unit); !ok {
			ps.add(line, "unit", "%q is not a known unit; write a UN/ECE Recommendation 20 code (C62 piece, KGM, MTR, PK, …) or leave it empty for every unit", e.Unit)
		}
	}
	e.ValidFrom = date(line, "valid_from", f(5), ps)
	e.ValidTo = date(line, "valid_to", f(6), ps)
	if !e.ValidFrom.IsZero() && !e.ValidTo.IsZero() && e.ValidTo.String() < e.ValidFrom.String() {
		ps.add(line, "valid_to", "%s is before valid_from %s", e.ValidTo, e.ValidFrom)
	}
	return e, len(ps.Problems)+ps.More == before
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// decimal validates a non-negative decimal with "." as decimal point; an
// empty value is def ("" makes it required).
func decimal(line int, column, s, def string, ps *problems) string {
	if s == "" {
		if def == "" {
			ps.add(line, column, "empty: a decimal number is required")
		}
		return def
	}
	d, ok := order.CanonicalDecimal(s)
	switch {
	case !ok && strings.Count(s, ",") == 1 && !strings.Contains(s, "."):
		ps.add(line, column, "%q is not a decimal number: write the decimal point as a dot (%s)", s, strings.Replace(s, ",", ".", 1))
	case !ok:
		ps.add(line, column, "%q is not a decimal number (digits and one dot, no thousands separators or currency)", s)
	case strings.HasPrefix(d, "-"):
		ps.add(line, column, "%q is negative", s)
	default:
		return d
	}
	return ""
}

// date validates an empty value (open) or YYYY-MM-DD.
func date(line int, column, s string, ps *problems) order.Date {
	if s == "" {
		return order.Date{}
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		ps.add(line, column, "%q is not a date: write YYYY-MM-DD, or leave it empty for no limit", s)
		return order.Date{}
	}
	return order.DateOf(t)
}

// checkOverlaps refuses two entries that could price the same line: the
// same article, currency and unit (an entry without unit counts for every
// unit) with overlapping validity.
func checkOverlaps(es []Entry, ps *problems) {
	byArticle := map[string][]int{}
	for i, e := range es {
		k := ArticleKey(e.Article) + "\x00" + e.Currency
		for _, j := range byArticle[k] {
			o := es[j]
			if (o.UnitCode() == "" || e.UnitCode() == "" || o.UnitCode() == e.UnitCode()) && overlap(o, e) {
				ps.add(e.Line, "", "article %s in %s overlaps line %d (same unit and validity): which price applies would be a guess",
					e.Article, e.Currency, o.Line)
				break
			}
		}
		byArticle[k] = append(byArticle[k], i)
	}
}

func overlap(a, b Entry) bool {
	aFrom, aTo, bFrom, bTo := a.ValidFrom.String(), a.ValidTo.String(), b.ValidFrom.String(), b.ValidTo.String()
	return (aTo == "" || bFrom == "" || bFrom <= aTo) && (bTo == "" || aFrom == "" || aFrom <= bTo)
}

// Write writes entries as a CSV that Parse reads back to the same entries
// (the export of a list).
func Write(w io.Writer, entries []Entry) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return fmt.Errorf("write price list: %w", err)
	}
	for _, e := range entries {
		if err := cw.Write([]string{e.Article, e.Currency, e.UnitPrice, e.PriceBasis, e.Unit, e.ValidFrom.String(),
			e.ValidTo.String(), e.TolerancePct}); err != nil {
			return fmt.Errorf("write price list: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write price list: %w", err)
	}
	return nil
}
