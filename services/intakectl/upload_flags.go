package intakectl

import (
	"fmt"
	"io"
	"strings"
)

// printFlags lists, after --wait's summary, every document whose order was
// flagged (docs/orders.md): a price outside the client's price list or a
// delivery date that cannot be met, with the expected and printed values.
// Flags are findings, not failures: the exit code does not change.
func printFlags(w io.Writer, docs []*uploadFile) {
	var flagged []*uploadFile
	for _, d := range docs {
		if len(d.flags) > 0 {
			flagged = append(flagged, d)
		}
	}
	if len(flagged) == 0 {
		return
	}
	fmt.Fprintf(w, "\nflagged (%d documents):\n", len(flagged))
	for _, d := range flagged {
		fmt.Fprintf(w, "%s %s (%s)\n", d.logID, strings.Join(d.paths, ", "), d.state.Outcome())
		for _, f := range d.flags {
			where := "order"
			if f.Line > 0 {
				where = fmt.Sprintf("line %d", f.Line)
			}
			fmt.Fprintf(w, "  %s, %s: expected %s, printed %s: %s\n", f.Kind, where, dash(f.Expected), f.Printed, f.Message)
		}
	}
}
