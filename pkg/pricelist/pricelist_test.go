package pricelist_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pricelist"
	"github.com/stretchr/testify/require"
)

const header = "article,currency,unit_price,price_basis,unit,valid_from,valid_to,tolerance_pct\n"

// problems parses csv and returns its problems as strings.
func problems(t *testing.T, csv string) []string {
	t.Helper()
	_, err := pricelist.Parse(strings.NewReader(csv), 0)
	var pe *pricelist.Error
	require.True(t, errors.As(err, &pe), "want *pricelist.Error, got %v", err)
	out := make([]string, len(pe.Problems))
	for i, p := range pe.Problems {
		out[i] = p.String()
	}
	return out
}

func TestParse(t *testing.T) {
	t.Parallel()
	es, err := pricelist.Parse(strings.NewReader("\uFEFF"+header+
		"S-100,eur,12.50,,PCE,,,2\n"+
		" B-1 ,EUR,150,100,kg,2026-01-01,2026-12-31,\n"), 0)
	require.NoError(t, err)
	require.Equal(t, []pricelist.Entry{
		{Line: 2, Article: "S-100", Currency: "EUR", UnitPrice: "12.50", PriceBasis: "1", Unit: "PCE", TolerancePct: "2"},
		{Line: 3, Article: "B-1", Currency: "EUR", UnitPrice: "150", PriceBasis: "100", Unit: "kg",
			ValidFrom: order.Date{Year: 2026, Month: 1, Day: 1}, ValidTo: order.Date{Year: 2026, Month: 12, Day: 31}, TolerancePct: "0"},
	}, es)
	require.Equal(t, "C62", es[0].UnitCode())
	require.Equal(t, "KGM", es[1].UnitCode())

	// Export and import give the same entries.
	var buf bytes.Buffer
	require.NoError(t, pricelist.Write(&buf, es))
	again, err := pricelist.Parse(&buf, 0)
	require.NoError(t, err)
	require.Equal(t, es, again)
}

// Every row is validated and every problem named by line and column.
func TestParseProblems(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"line 1: the header must be exactly " + strings.TrimSpace(header) +
		", not article,currency,price,unit"}, problems(t, "article,currency,price,unit\nA,EUR,1,C62\n"))
	require.Equal(t, []string{"line 1: the file is empty; the first line must be the header " + strings.TrimSpace(header)},
		problems(t, ""))
	require.Equal(t, []string{"line 1: no entries after the header (to remove a price list, delete it)"}, problems(t, header))

	got := problems(t, header+
		"A-1,EUR,\"12,50\",,C62,,,\n"+ // a decimal comma
		"A-2,EURO,1.5.0,0,C62,,,\n"+ // currency, decimal, basis 0
		"A-3,EUR,1,,boxes of 7,2026-13-01,,\n"+ // unknown unit, bad date
		",EUR,-1,,,,,101\n"+ // no article, negative price, tolerance
		"A-5,EUR,1,,,2026-02-01,2026-01-01,\n"+ // to before from
		"A-6,EUR,1\n") // columns
	require.Equal(t, []string{
		`line 2, column unit_price: "12,50" is not a decimal number: write the decimal point as a dot (12.50)`,
		`line 3, column currency: "EURO" is not a currency code (three letters, ISO 4217, such as EUR)`,
		`line 3, column unit_price: "1.5.0" is not a decimal number (digits and one dot, no thousands separators or currency)`,
		`line 3, column price_basis: 0: the price basis (how many units the price is for) must be more than 0`,
		`line 4, column unit: "boxes of 7" is not a known unit; write a UN/ECE Recommendation 20 code (C62 piece, KGM, MTR, PK, …) or leave it empty for every unit`,
		`line 4, column valid_from: "2026-13-01" is not a date: write YYYY-MM-DD, or leave it empty for no limit`,
		`line 5, column article: empty: the buyer's or the supplier's article number is required`,
		`line 5, column unit_price: "-1" is negative`,
		`line 5, column tolerance_pct: 101: a tolerance is a percentage from 0 to 100`,
		`line 6, column valid_to: 2026-01-01 is before valid_from 2026-02-01`,
		`line 7: 3 columns, want 8 (` + strings.TrimSpace(header) + `)`,
	}, got)

	require.Equal(t, []string{`line 3: not CSV: extraneous or missing " in quoted-field`},
		problems(t, header+"A,EUR,1,,,,,\nB,\"EUR,1,,,,,\n"))
}

// Two entries that could price one line are refused: the price would be a
// guess. Other units, currencies or disjoint validity are fine.
func TestParseOverlaps(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"line 3: article a-1 in EUR overlaps line 2 (same unit and validity): which price applies would be a guess"},
		problems(t, header+"A-1,EUR,1,,C62,,2026-06-30,\na-1,EUR,2,,PCE,2026-06-30,,\n"))
	require.Equal(t, []string{"line 3: article A-1 in EUR overlaps line 2 (same unit and validity): which price applies would be a guess"},
		problems(t, header+"A-1,EUR,1,,,,,\nA-1,EUR,2,,KGM,2027-01-01,,\n"), "an entry without unit is for every unit")
	_, err := pricelist.Parse(strings.NewReader(header+
		"A-1,EUR,1,,C62,,2026-06-29,\nA-1,EUR,2,,C62,2026-06-30,,\nA-1,USD,2,,C62,,,\nA-1,EUR,2,,KGM,,,\n"), 0)
	require.NoError(t, err)
}

func TestParseMaxRows(t *testing.T) {
	t.Parallel()
	_, err := pricelist.Parse(strings.NewReader(header+"A,EUR,1,,,,,\nB,EUR,1,,,,,\nC,EUR,1,,,,,\n"), 2)
	require.EqualError(t, err, "invalid price list: line 4: more than 2 entries; split the list by buyer")
}

func TestFind(t *testing.T) {
	t.Parallel()
	d := func(y int, m time.Month, day int) order.Date { return order.Date{Year: y, Month: m, Day: day} }
	es := []pricelist.Entry{
		{Line: 2, Article: "S-100", Currency: "EUR", UnitPrice: "1.00", PriceBasis: "1", ValidTo: d(2025, 12, 31)},
		{Line: 3, Article: "S-100", Currency: "EUR", UnitPrice: "1.50", PriceBasis: "1", ValidFrom: d(2026, 1, 1)},
		{Line: 4, Article: "B-2", Currency: "EUR", UnitPrice: "3", PriceBasis: "1", Unit: "kg"},
		{Buyer: "ACME", Line: 2, Article: "S-300", Currency: "EUR", UnitPrice: "9", PriceBasis: "1"},
		{Line: 5, Article: "S-300", Currency: "EUR", UnitPrice: "8", PriceBasis: "1"},
	}
	q := pricelist.Query{Articles: []string{"S-100", "B-1"}, Currency: "EUR", Date: d(2026, 2, 3)}
	require.Equal(t, 3, pricelist.Find(es, q).Entry.Line, "the entry valid on the order date")
	q.Date = d(2025, 12, 31)
	require.Equal(t, 2, pricelist.Find(es, q).Entry.Line)
	q.Currency = "USD"
	m := pricelist.Find(es, q)
	require.True(t, m.Listed)
	require.Nil(t, m.Entry)
	require.Len(t, m.Others, 2)

	// By the buyer's article number when the supplier's is not listed; the
	// unit compared by its code.
	m = pricelist.Find(es, pricelist.Query{Articles: []string{"S-200", " b-2 "}, Currency: "EUR", Unit: "KGM", Date: d(2026, 2, 3)})
	require.Equal(t, 4, m.Entry.Line)
	require.Equal(t, "b-2", m.Article)
	m = pricelist.Find(es, pricelist.Query{Articles: []string{"B-2"}, Currency: "EUR", Unit: "Stk.", Date: d(2026, 2, 3)})
	require.True(t, m.Listed)
	require.Nil(t, m.Entry, "per kilogram does not price pieces")

	// The buyer's own list wins for an article it names.
	m = pricelist.Find(es, pricelist.Query{Articles: []string{"S-300"}, Currency: "EUR", Date: d(2026, 2, 3)})
	require.Equal(t, "ACME", m.Entry.Buyer)
	require.False(t, pricelist.Find(es, pricelist.Query{Articles: []string{"X"}, Currency: "EUR"}).Listed)
}
