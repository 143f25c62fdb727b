package template_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/template"
	"github.com/stretchr/testify/require"
)

// routeTemplate is a template named name with keywords and priority (0:
// none written, invoice2data's default 5).
func routeTemplate(t *testing.T, name string, priority int, keywords ...string) *template.Template {
	t.Helper()
	yml := "keywords:\n"
	for _, k := range keywords {
		yml += fmt.Sprintf("  - '%s'\n", k)
	}
	if priority != 0 {
		yml += fmt.Sprintf("priority: %d\n", priority)
	}
	yml += "fields:\n  order_id: 'PO (\\d+)'\ndocintake:\n  name: " + name + "\n"
	return parseTemplate(t, yml)
}

const alpineText = "Alpine Components AG      Bestellung Nr. 759812\nDatum: 07.07.2024\n"

func names(ts []*template.Template) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// The single template whose keywords all match is chosen; a template with
// one keyword missing does not compete, an exclude keyword removes one.
func TestCompeteSingleMatch(t *testing.T) {
	alpine := routeTemplate(t, "alpine", 0, "Alpine Components AG", `Bestellung Nr\.`)
	nordwind := routeTemplate(t, "nordwind", 0, "Nordwind Handels GmbH", "BESTELLUNG")
	half := routeTemplate(t, "half", 0, "Alpine Components AG", "INKOOPORDER")
	c, err := template.Compete(t.Context(), alpineText, []*template.Template{nordwind, half, alpine}, 0)
	require.NoError(t, err)
	require.Same(t, alpine, c.Chosen)
	require.Equal(t, []string{"alpine"}, names(c.Matched))
	require.Equal(t, 3, c.Tried)
	require.Equal(t, "template alpine (priority 5), the only one of 3 templates whose keywords all match", c.Explain())

	excluded := parseTemplate(t, "keywords: [Alpine]\nexclude_keywords: [Bestellung]\nfields: {order_id: 'x'}\ndocintake: {name: excluded}\n")
	c, err = template.Compete(t.Context(), alpineText, []*template.Template{excluded}, 0)
	require.NoError(t, err)
	require.Nil(t, c.Chosen)
	require.Equal(t, "none of the 1 templates' keywords all match", c.Explain())
}

// Two templates matching: the higher priority wins whatever the order they
// are given in; the same priority is no choice.
func TestCompetePriorityAndTie(t *testing.T) {
	specific := routeTemplate(t, "alpine-po", 10, "Alpine Components AG", `Bestellung Nr\.`)
	broad := routeTemplate(t, "alpine-any", 1, "Alpine")
	for _, order := range [][]*template.Template{{specific, broad}, {broad, specific}} {
		c, err := template.Compete(t.Context(), alpineText, order, 0)
		require.NoError(t, err)
		require.Same(t, specific, c.Chosen)
		require.Equal(t, []string{"alpine-po", "alpine-any"}, names(c.Matched))
		require.Equal(t, "template alpine-po (priority 10) over alpine-any (priority 1)", c.Explain())
	}

	a := routeTemplate(t, "alpine-a", 0, "Alpine Components AG")
	b := routeTemplate(t, "alpine-b", 0, `Bestellung Nr\.`)
	c, err := template.Compete(t.Context(), alpineText, []*template.Template{b, a, broad}, 0)
	require.NoError(t, err)
	require.Nil(t, c.Chosen)
	require.Equal(t, []string{"alpine-a", "alpine-b", "alpine-any"}, names(c.Matched))
	require.Equal(t, "templates alpine-a, alpine-b match with the same priority 5: no choice", c.Explain())
}

// Templates that only read structured attachments never compete on text,
// and the competition honours the run budget.
func TestCompeteEmbeddedAndBudget(t *testing.T) {
	req := parseTemplate(t, "keywords: [Alpine]\nfields: {order_id: 'x'}\ndocintake: {name: req, embedded: require}\n")
	c, err := template.Compete(t.Context(), alpineText, []*template.Template{req}, 0)
	require.NoError(t, err)
	require.Nil(t, c.Chosen)
	require.Zero(t, c.Tried)

	_, err = template.Compete(t.Context(), alpineText, []*template.Template{routeTemplate(t, "a", 0, "Alpine")}, time.Nanosecond)
	var be *template.BudgetError
	require.True(t, errors.As(err, &be), "%v", err)
}
