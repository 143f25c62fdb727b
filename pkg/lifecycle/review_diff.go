package lifecycle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/docintake/docintake/pkg/resultjson"
)

// approvalDetail is the event of an approval: who approved, each value
// that changed (old → new, by its result JSON path) and the comment.
func approvalDetail(read, approved resultjson.Order, who, comment string) string {
	changes := Changes(read, approved)
	var b strings.Builder
	fmt.Fprintf(&b, "approved in review by %s", who)
	if len(changes) == 0 {
		b.WriteString("; no value changed")
	} else {
		fmt.Fprintf(&b, "; %d changed: %s", len(changes), strings.Join(changes, "; "))
	}
	if c := strings.TrimSpace(comment); c != "" {
		fmt.Fprintf(&b, "; comment: %s", c)
	}
	return b.String()
}

// Changes lists the values that differ between two result JSON orders as
// `path: "old" → "new"` (paths as order_id, items[2].quantity,
// parties[0].address.city), sorted by path; a value that is absent on one
// side is "". Lists compare position by position.
func Changes(before, after resultjson.Order) []string {
	a, b := flatten(before), flatten(after)
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: %q → %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && v != "" {
			out = append(out, fmt.Sprintf("%s: %q → %q", k, "", v))
		}
	}
	slices.Sort(out)
	return out
}

// flatten maps each leaf of o's JSON to its text.
func flatten(o resultjson.Order) map[string]string {
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
