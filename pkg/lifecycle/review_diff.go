package lifecycle

import (
	"fmt"
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
	var out []string
	for _, d := range resultjson.Diff(before, after) {
		out = append(out, fmt.Sprintf("%s: %q → %q", d.Path, d.Before, d.After))
	}
	return out
}
