package ingest

import (
	"slices"

	"github.com/labstack/echo/v4"
)

// operator is the person acting in the console. Every action the console
// takes is attributed to its name in the document's history, and an
// operator limited to some clients sees and acts on only their documents.
type operator struct {
	Name    string   // shown in the history as "operator:<Name>"
	Clients []string // nil: every client
}

// consoleOperator is who holds the shared INTAKE_OPS_TOKEN: it has no name
// of its own, so its actions are attributed to the console.
var consoleOperator = operator{Name: "ops-console"}

// actor is the operator's name as the history records it.
func (op operator) actor() string { return "operator:" + op.Name }

// sees reports whether the operator may see and act on clientID's documents.
func (op operator) sees(clientID string) bool {
	return op.Clients == nil || slices.Contains(op.Clients, clientID)
}

// operatorOf is the operator auth found for the request.
func operatorOf(c echo.Context) operator {
	if op, ok := c.Get("ops_operator").(operator); ok {
		return op
	}
	return consoleOperator
}
