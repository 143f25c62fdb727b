package ingest

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/order"
	"github.com/stretchr/testify/require"
)

// A value is found where it is printed in any of the corpus's number and
// date formats, and not in words that only contain its digits.
func TestPrintsValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		printed, value string
		want           bool
	}{
		{"3,115.00", "3115.00", true}, {"$3,115.00", "3115.00", true}, {"3.115,00 EUR", "3115.00", true},
		{"3 115,00", "3115.00", true}, {"USD 20", "20.00", true}, {"(-)0.37", "-0.37", true}, {"18%", "18", true},
		{"Rs.1,23,456.50", "123456.50", true}, {"1.250", "1250", true}, {"1.250", "1.25", true},
		{"#5", "5", false}, {"Total 20.00", "20.00", false}, {"8/29/2019", "8", false}, {"MM5-1121", "5", false},
		{"35", "5", false}, {"20", "20.01", false},
	} {
		require.Equal(t, tc.want, printsNumber(tc.printed, order.Rat(tc.value)), "%q as %s", tc.printed, tc.value)
	}
	day := time.Date(2019, 8, 29, 0, 0, 0, 0, time.UTC)
	for _, s := range []string{"8/29/2019", "29.08.2019", "29-Aug-2019", "29-AUG-19", "Aug 29, 2019", "2019-08-29", "29 August 2019"} {
		require.True(t, printsDate(s, day), s)
	}
	require.False(t, printsDate("8/28/2019", day))
}
