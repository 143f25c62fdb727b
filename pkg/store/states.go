package store

import "github.com/docintake/docintake/pkg/document"

// statesWhere is document.StatesWhere in the form SQL binds (state =
// ANY($n::text[])): queries that filter on a kind of state take the list
// from the state table instead of spelling it out, so a new state is added
// in pkg/document only (TestSQLSpellsNoState holds the SQL to that).
func statesWhere(pred func(document.State) bool) []string {
	return stateStrings(document.StatesWhere(pred))
}

// stateStrings is states as the text the documents table stores.
func stateStrings(states []document.State) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}
