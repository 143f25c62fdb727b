package lifecycle_test

import (
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/template"
	"github.com/docintake/docintake/pkg/units"
	"github.com/stretchr/testify/require"
)

// MissingIn reads what a deferral waits for in the processor's words: a
// mapping entry (template.MissingMapping and the field), the units of
// units.Unresolved.Detail with their lines (a unit on two lines is one
// entry), and a mapping table named "unit" as a mapping, not the unit
// table. AddUnit finds the documents waiting for a unit by UnitWaitingFor,
// which the unit's detail contains.
func TestMissingIn(t *testing.T) {
	t.Parallel()
	article := "text (pdftotext): " + template.MissingMapping("article", `B-1"00`) +
		" (field buyer_article_id) (deferral 1 of 6, next attempt in 1m0s)"
	require.Equal(t, []lifecycle.Missing{{Kind: "article", Key: `B-1"00`, Field: "buyer_article_id"}}, lifecycle.MissingIn(article))

	unresolved := units.Unresolved{{Line: 2, Position: "20", Unit: "Bund"}, {Line: 3, Position: "30", Unit: "Rolle"},
		{Line: 5, Position: "50", Unit: "Bund"}}
	dlq := "retry schedule exhausted after 6 deferrals: text (pdftotext): " + unresolved.Detail()
	require.Equal(t, []lifecycle.Missing{
		{Kind: "unit", Key: "Bund", Unit: true, Field: "unit", Lines: []int{2, 5}},
		{Kind: "unit", Key: "Rolle", Unit: true, Field: "unit", Lines: []int{3}},
	}, lifecycle.MissingIn(dlq))
	require.True(t, strings.Contains(dlq, lifecycle.UnitWaitingFor("Rolle")))
	require.False(t, strings.Contains(dlq, lifecycle.UnitWaitingFor("Roll")))

	table := template.MissingMapping("unit", "Stk") + " (field unit)"
	require.Equal(t, []lifecycle.Missing{{Kind: "unit", Key: "Stk", Field: "unit"}}, lifecycle.MissingIn(table))
	require.False(t, strings.Contains(table, lifecycle.UnitWaitingFor("Stk")), "not the unit table's wait")
	require.Empty(t, lifecycle.MissingIn("arithmetic check failed: net_total"))
}
