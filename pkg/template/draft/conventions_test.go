package draft

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDetectNumbers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text, dec, group string
	}{
		{"Total 1.234,56 EUR\nPreis 12,50", ",", "."},
		{"Total $1,234.56\nPrice 12.50", ".", ","},
		{"Total CHF 1'234.50\nPreis 3.99", ".", "'"},
		{"Total HT : 1 234,56 €\nPrix 0,45", ",", " "},
		{"Prix 12,50 et 3,20", ",", ""},
		{"Menge 2.400 Preis 6,24", ",", "."},
		{"Datum 07.07.2024 Betrag 12,50", ",", ""}, // the date is not a grouped number
		{"no numbers at all", ".", ""},
	} {
		nc := detectNumbers([]string{c.text})
		require.Equal(t, c.dec, nc.Decimal, c.text)
		require.Equal(t, c.group, nc.Group, c.text)
		require.NotEmpty(t, nc.Why)
		if c.group != "" {
			require.Regexp(t, `^(?:`+nc.numberRe()+`)$`, "1"+c.group+"234"+c.dec+"56")
		}
	}
}

func TestDetectDates(t *testing.T) {
	t.Parallel()
	dot := numberConv{Decimal: "."}
	comma := numberConv{Decimal: ","}
	for _, c := range []struct {
		text   string
		nc     numberConv
		dollar bool
		format string
	}{
		{"Date 31/12/2024", dot, false, "%d/%m/%Y"},
		{"Date 12/31/2024", dot, true, "%m/%d/%Y"},
		{"Date 03/04/2024 total $12.00", dot, true, "%m/%d/%Y"}, // ambiguous: US by '/' and dollars
		{"Date 03/04/2024 total 12,00", comma, false, "%d/%m/%Y"},
		{"Datum 07.07.2024 Liefertermin 28.07.2024", comma, false, "%d.%m.%Y"},
		{"Orderdatum 08-01-2024", comma, false, "%d-%m-%Y"},
		{"Date 05/06/24 and 25/06/24", dot, false, "%d/%m/%y"},
		{"Date 2024-05-07", dot, false, "%Y-%m-%d"},
		{"Date 7 mai 2024", comma, false, ""},
	} {
		dc := detectDates([]string{c.text}, c.nc, c.dollar)
		require.Equal(t, c.format, dc.Format, c.text)
		require.NotEmpty(t, dc.Why)
	}
}

func TestCellsAndHeader(t *testing.T) {
	t.Parallel()
	box := cells("| IO26703        | 08-01-2024     |")
	require.Equal(t, []cell{{"IO26703", 2, 9}, {"08-01-2024", 19, 29}}, box)
	require.Equal(t, "PO Number: GLT1", cells("  PO Number: GLT1   Date: 1")[0].Text)

	cols := parseHeader("Line   Item #   Description      Req. Date       Qty UOM     Unit Price    Extended")
	var roles []role
	for _, c := range cols {
		roles = append(roles, c.Role)
	}
	require.Equal(t, []role{rolePosition, roleArticle, roleDesc, roleDate, roleQty, roleUnit, rolePrice, roleAmount}, roles)
	require.Equal(t, "Req. Date", cols[3].Text)
	require.Nil(t, parseHeader("Currency: USD     Terms: Net 45     FOB: Destination"))
	cols = parseHeader("Part Number   Description    Quantity Ordered   Unit Cost   Extended Price")
	roles = nil
	for _, c := range cols {
		roles = append(roles, c.Role)
	}
	require.Equal(t, []role{roleArticle, roleDesc, roleQty, rolePrice, roleAmount}, roles)
	require.Equal(t, "Quantity Ordered", cols[2].Text)
}
