package opentrans

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
)

// schemaTypes reads the simple types of bmecat_2005.xsd: enumerations and
// patterns by type name.
func schemaTypes(t *testing.T) (enums map[string][]string, patterns map[string]string) {
	t.Helper()
	p := filepath.Join(opentranstest.SharedDir(t), "opentrans", "xsd", "bmecat_2005.xsd")
	raw, err := os.ReadFile(p)
	require.NoError(t, err)
	var schema struct {
		Types []struct {
			Name        string `xml:"name,attr"`
			Enumeration []struct {
				Value string `xml:"value,attr"`
			} `xml:"restriction>enumeration"`
			Pattern []struct {
				Value string `xml:"value,attr"`
			} `xml:"restriction>pattern"`
		} `xml:"simpleType"`
	}
	require.NoError(t, xml.Unmarshal(raw, &schema))
	enums, patterns = map[string][]string{}, map[string]string{}
	for _, st := range schema.Types {
		for _, e := range st.Enumeration {
			enums[st.Name] = append(enums[st.Name], e.Value)
		}
		if len(st.Pattern) > 0 {
			patterns[st.Name] = st.Pattern[0].Value
		}
	}
	return enums, patterns
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestCodeListsMatchSchema checks the embedded code lists against the
// schema: a code the writer emits that the schema lacks would make every such
// document invalid.
func TestCodeListsMatchSchema(t *testing.T) {
	t.Parallel()
	enums, patterns := schemaTypes(t)

	require.ElementsMatch(t, enums["dtPUNIT"], keys(unitList), "unitList is dtPUNIT")
	for printed, code := range unitCodes {
		require.Contains(t, enums["dtPUNIT"], code, "unit %q", printed)
	}
	require.NotContains(t, enums["dtPUNIT"], "H87")
	require.NotContains(t, enums["dtPUNIT"], "PCE")

	require.ElementsMatch(t, enums["dtCURRENCIES"], keys(currencies), "currencies are dtCURRENCIES")
	for sym, code := range currencySymbols {
		require.True(t, currencies[code], sym)
	}

	for in, code := range languages {
		require.Contains(t, enums["dtLANG"], code, "language %q", in)
	}

	// dtCOUNTRIES is a pattern: "(AD|AE|...){1,1}(-[A-Z|0-9]{1,3}){0,1}".
	m := regexp.MustCompile(`^\(([A-Z|]+)\)`).FindStringSubmatch(patterns["dtCOUNTRIES"])
	require.NotNil(t, m, patterns["dtCOUNTRIES"])
	require.ElementsMatch(t, strings.Split(m[1], "|"), keys(countries), "countries are dtCOUNTRIES")
}

func TestUnitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		printed string
		code    string
		known   bool
	}{
		{"", "C62", true},
		{"Stk.", "C62", true}, {"STK", "C62", true}, {"Stück", "C62", true}, {"St", "C62", true},
		{"pcs", "C62", true}, {"PC", "C62", true}, {"piece", "C62", true}, {"EA", "C62", true}, {"each", "C62", true},
		{"pièce", "C62", true}, {"unité", "C62", true}, {"H87", "C62", true}, {"PCE", "C62", true},
		{"kg", "KGM", true}, {"KG", "KGM", true}, {"g", "GRM", true}, {"t", "TNE", true},
		{"m", "MTR", true}, {"lfm", "MTR", true}, {"mm", "MMT", true}, {"m²", "MTK", true}, {"qm", "MTK", true},
		{"m3", "MTQ", true}, {"l", "LTR", true}, {"Liter", "LTR", true}, {"ml", "MLT", true},
		{"Pack", "PK", true}, {"Pkg.", "PK", true}, {"VPE", "PK", true}, {"Set", "SET", true}, {"Satz", "SET", true},
		{"Paar", "PR", true}, {"paire", "PR", true}, {"Box", "BX", true}, {"Karton", "CT", true}, {"Rolle", "RO", true},
		{"Beutel", "BG", true}, {"Flasche", "BO", true}, {"Palette", "PF", true}, {"Dutzend", "DZN", true},
		{"Std.", "HUR", true}, {"h", "HUR", true}, {"heures", "HUR", true}, {"Tag", "DAY", true}, {"kWh", "KWH", true},
		{" s t k . ", "C62", true},
		// Codes of the 2005 list are kept as printed (upper case only: "pa"
		// could be anything).
		{"NAR", "NAR", true}, {"PA", "PA", true},
		// Unknown: the default, and the caller keeps the printed unit.
		{"Bund", "C62", false}, {"km", "C62", false}, {"nar", "C62", false}, {"???", "C62", false},
	}
	for _, tt := range tests {
		code, known := UnitCode(tt.printed)
		require.Equal(t, tt.code, code, "%q", tt.printed)
		require.Equal(t, tt.known, known, "%q", tt.printed)
	}
}

func TestShiftDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, factor string }{
		{"19", "0.19"}, {"7", "0.07"}, {"19.00", "0.1900"}, {"0", "0.00"}, {"5.5", "0.055"}, {"100", "1.00"},
		{"-2", "-0.02"}, {"0.5", "0.005"}, {"250", "2.50"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.factor, shiftDecimal(tt.in, -2), tt.in)
		require.Equal(t, tt.in, shiftDecimal(tt.factor, 2), tt.factor)
	}
}
