package pogen

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"

	"github.com/docintake/docintake/pkg/generic"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// TextFunc turns a PDF into its layout text (pdftotext -layout, or the
// services' text engine).
type TextFunc func(ctx context.Context, pdf []byte) (string, error)

// Score is the generic reader's score on generated documents.
type Score struct {
	Orders, Negatives int
	Right             int // orders delivered with every scored value right
	Wrong             int // orders delivered with a wrong value: must stay 0
	NegDelivered      int // negatives delivered as orders: must stay 0
	// Wrongs name each wrong delivery and its differences.
	Wrongs []string
	// Features counts, per layout feature, the orders that have it and
	// those delivered right.
	Features map[string]*FeatureScore
	// Reasons counts the rejections of orders by reason.
	Reasons map[string]int
}

// FeatureScore is one feature's share.
type FeatureScore struct{ Orders, Right int }

// ScoreReader generates the documents of seeds and reads each with the
// generic reader. Scored values, as issue 24 defines them: order id, order
// date, currency, total (gross, else net), and every item's quantity,
// unit price and line amount.
func ScoreReader(ctx context.Context, seeds []int64, text TextFunc) (*Score, error) {
	s := &Score{Features: map[string]*FeatureScore{}, Reasons: map[string]int{}}
	for _, seed := range seeds {
		pdf, tr, err := Generate(seed)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		txt, err := text(ctx, pdf)
		if err != nil {
			return nil, fmt.Errorf("seed %d: text: %w", seed, err)
		}
		res, err := generic.Read(ctx, txt, generic.Options{})
		if err != nil {
			return nil, err
		}
		s.add(seed, tr, res)
	}
	return s, nil
}

func (s *Score) add(seed int64, tr Truth, res *generic.Result) {
	delivered := res.Outcome.Status == template.OutcomeSuccess
	if tr.Kind != "order" {
		s.Negatives++
		if delivered {
			s.NegDelivered++
			s.Wrongs = append(s.Wrongs, fmt.Sprintf("seed %d: a %s was delivered as an order", seed, tr.Kind))
		}
		return
	}
	s.Orders++
	for _, f := range tr.Features {
		if s.Features[f] == nil {
			s.Features[f] = &FeatureScore{}
		}
		s.Features[f].Orders++
	}
	if !delivered {
		s.Reasons[reasonKey(res.Outcome)]++
		return
	}
	if diffs := Diff(res.Order, tr); len(diffs) > 0 {
		s.Wrong++
		s.Wrongs = append(s.Wrongs, fmt.Sprintf("seed %d: %s", seed, strings.Join(diffs, "; ")))
		return
	}
	s.Right++
	for _, f := range tr.Features {
		s.Features[f].Right++
	}
}

// reasonKey is a rejection's reason and the start of its detail (the
// part before the first number or quote), to count alike rejections.
func reasonKey(o *template.Outcome) string {
	d := strings.TrimPrefix(o.Detail, "generic reader: ")
	if i := strings.IndexAny(d, "0123456789\"("); i > 0 {
		d = d[:i]
	}
	return o.Reason.WireValue() + ": " + strings.TrimSpace(d)
}

// Diff lists the scored values of o that differ from the truth.
func Diff(o *order.Order, tr Truth) []string {
	var out []string
	ne := func(name, got, want string) {
		if !sameDecimal(got, want) {
			out = append(out, fmt.Sprintf("%s %q, want %q", name, got, want))
		}
	}
	if o.ID != tr.OrderID {
		out = append(out, fmt.Sprintf("order id %q, want %q", o.ID, tr.OrderID))
	}
	if o.IssueDate.String() != tr.OrderDate {
		out = append(out, fmt.Sprintf("order date %s, want %q", o.IssueDate, tr.OrderDate))
	}
	if o.Currency != tr.Currency {
		out = append(out, fmt.Sprintf("currency %q, want %q", o.Currency, tr.Currency))
	}
	ne("total", firstOf(o.Totals.GrossAmount, o.Totals.NetAmount), firstOf(tr.Gross, tr.Net))
	if len(o.Items) != len(tr.Items) {
		return append(out, fmt.Sprintf("%d items, want %d", len(o.Items), len(tr.Items)))
	}
	for i, it := range tr.Items {
		ne(fmt.Sprintf("item %d quantity", i+1), o.Items[i].Quantity, it.Quantity)
		ne(fmt.Sprintf("item %d unit price", i+1), o.Items[i].UnitPrice, it.UnitPrice)
		ne(fmt.Sprintf("item %d line amount", i+1), o.Items[i].LineAmount, it.LineAmount)
	}
	return out
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sameDecimal compares decimals by value ("5518.00" = "5518"); "" only
// equals "".
func sameDecimal(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// Write prints the score: the totals, the share per feature and the
// rejections by reason.
func (s *Score) Write(w io.Writer) {
	fmt.Fprintf(w, "orders %d: delivered right %d (%.1f %%), delivered wrong %d; negatives %d: delivered %d\n",
		s.Orders, s.Right, pct(s.Right, s.Orders), s.Wrong, s.Negatives, s.NegDelivered)
	names := make([]string, 0, len(s.Features))
	for f := range s.Features {
		names = append(names, f)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "%-24s %7s %7s %7s\n", "feature", "orders", "right", "share")
	for _, f := range names {
		fs := s.Features[f]
		fmt.Fprintf(w, "%-24s %7d %7d %6.1f%%\n", f, fs.Orders, fs.Right, pct(fs.Right, fs.Orders))
	}
	reasons := make([]string, 0, len(s.Reasons))
	for r := range s.Reasons {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return s.Reasons[reasons[i]] > s.Reasons[reasons[j]] })
	fmt.Fprintln(w, "rejected orders by reason:")
	for _, r := range reasons {
		fmt.Fprintf(w, "%5d  %s\n", s.Reasons[r], r)
	}
	for _, x := range s.Wrongs {
		fmt.Fprintln(w, "WRONG", x)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
