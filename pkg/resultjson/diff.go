package resultjson

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Difference is one value that differs between two orders: its path in
// the result JSON (order_id, items[2].quantity, parties[0].address.city)
// and its text on each side ("" where it is absent).
type Difference struct {
	Path          string
	Before, After string
}

// Diff lists the values that differ between two orders, sorted by path.
// Lists compare position by position; a value absent on one side and
// empty on the other is no difference.
func Diff(before, after Order) []Difference {
	a, b := Flatten(before), Flatten(after)
	var out []Difference
	for k, v := range a {
		if b[k] != v {
			out = append(out, Difference{Path: k, Before: v, After: b[k]})
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && v != "" {
			out = append(out, Difference{Path: k, After: v})
		}
	}
	slices.SortFunc(out, func(x, y Difference) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// Flatten maps each leaf of o's JSON to its text, keyed by its path.
func Flatten(o Order) map[string]string {
	var v any
	b, _ := json.Marshal(o) // plain strings, slices and structs: cannot fail
	_ = json.Unmarshal(b, &v)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(strings.TrimPrefix(prefix+"."+k, "."), e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", prefix, i), e)
			}
		case nil:
		default:
			out[prefix] = fmt.Sprint(x)
		}
	}
	walk("", v)
	return out
}
