package lifecycle

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/template"
)

// Missing is an entry an order lacks before it can be delivered
// (MAPPING_NOT_RESOLVED): a mapping entry the template looks up
// (AddMapping), or a unit neither the client's unit table nor the
// built-in spellings know (Unit set; AddUnit).
type Missing struct {
	Kind string // the mapping table ("article"); "unit" for the unit table
	Key  string // the value as printed
	Unit bool
	// Field is the order field the key was printed in (buyer_article_id,
	// unit, delivery_address), "" when not known.
	Field string
	// Lines are the item lines (1-based) that print the key: none for a
	// header value, or when only a deferral's detail is known.
	Lines []int
}

// MissingFor returns every entry o lacks for clientID's tables: the
// mapping entries tpl (nil: none) looks up and does not find, not only
// the first the processor stops at, then the units (ApplyUnits). The
// template's arithmetic checks are left out; an order rejected before its
// mappings (no order number) has none to tell yet.
func (r Review) MissingFor(ctx context.Context, clientID string, tpl *template.Template, o order.Order) ([]Missing, error) {
	o.Items = slices.Clone(o.Items)
	o.Parties = slices.Clone(o.Parties)
	var out []Missing
	if tpl != nil && len(tpl.DocIntake.Mappings) > 0 {
		t := *tpl
		t.DocIntake.Checks = template.Checks{}
		rec := &missRecorder{m: mapper{r.Store, clientID}}
		if _, err := t.Verify(ctx, &o, rec, "", nil); err != nil {
			return nil, err
		}
		out = rec.needed(tpl.DocIntake.Mappings, o.Items)
	}
	missing, err := ApplyUnits(ctx, r.Store, clientID, &o)
	if err != nil {
		return nil, err
	}
	for _, l := range missing {
		i := slices.IndexFunc(out, func(m Missing) bool { return m.Unit && m.Key == l.Unit })
		if i < 0 {
			out = append(out, Missing{Kind: "unit", Key: l.Unit, Unit: true, Field: "unit"})
			i = len(out) - 1
		}
		out[i].Lines = append(out[i].Lines, l.Line)
	}
	return out, nil
}

// missRecorder looks entries up and records the misses, answering each
// miss with its key so that Verify goes on to every entry.
type missRecorder struct {
	m      mapper
	misses [][2]string // kind, key
}

func (c *missRecorder) Lookup(ctx context.Context, kind, key string) (string, bool, error) {
	v, ok, err := c.m.Lookup(ctx, kind, key)
	if err != nil || ok {
		return v, ok, err
	}
	if e := [2]string{kind, key}; !slices.Contains(c.misses, e) {
		c.misses = append(c.misses, e)
	}
	return key, true, nil
}

// needed are the misses a required mapping makes, with the field and the
// item lines that print each.
func (c *missRecorder) needed(mps []template.Mapping, items []order.Item) []Missing {
	var out []Missing
	for _, e := range c.misses {
		i := slices.IndexFunc(mps, func(mp template.Mapping) bool { return mp.Kind == e[0] && !mp.Optional })
		if i < 0 {
			continue // an optional mapping's miss keeps the printed value
		}
		m := Missing{Kind: e[0], Key: e[1], Field: mps[i].From}
		for n, it := range items {
			if template.MappingKey(&it, m.Field) == m.Key {
				m.Lines = append(m.Lines, n+1)
			}
		}
		out = append(out, m)
	}
	return out
}

var (
	// template.MissingMapping and the field: no article mapping for "X" (field buyer_article_id)
	mappingMiss = regexp.MustCompile(`no (\S+) mapping for ("(?:[^"\\]|\\.)*") \(field ([^)]+)\)`)
	// units.Unresolved.Detail's lines: "Bund" (line 1, position 10)
	unitMiss = regexp.MustCompile(`("(?:[^"\\]|\\.)*") \(line (\d+), position`)
)

// MissingIn reads the entries a deferral's detail names, in the
// processor's words (template.MissingMapping, units.Unresolved.Detail): what
// a document deferred before its reading was kept waits for.
func MissingIn(detail string) []Missing {
	var out []Missing
	for _, m := range mappingMiss.FindAllStringSubmatch(detail, -1) {
		if key, err := strconv.Unquote(m[2]); err == nil {
			out = append(out, Missing{Kind: m[1], Key: key, Field: m[3]})
		}
	}
	_, units, ok := strings.Cut(detail, "no unit mapping for ")
	if !ok {
		return out
	}
	for _, m := range unitMiss.FindAllStringSubmatch(units, -1) {
		key, err := strconv.Unquote(m[1])
		line, _ := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		i := slices.IndexFunc(out, func(x Missing) bool { return x.Unit && x.Key == key })
		if i < 0 {
			out = append(out, Missing{Kind: "unit", Key: key, Unit: true, Field: "unit"})
			i = len(out) - 1
		}
		out[i].Lines = append(out[i].Lines, line)
	}
	return out
}
