// Package template reads invoice2data templates (YAML or JSON, unchanged)
// extended by a docintake block, extracts fields, lines and tables from a
// PDF's layout text as invoice2data does, and turns the result into the
// canonical order (pkg/order) with an outcome and a reason.
//
// # Loading
//
// Load reads a templates directory strictly: every problem is an error with
// file, line and key path; duplicate names or party ids name both files.
// LoadWith(LoadOptions{Lenient: true}, …) keeps templates with problems (as
// invoice2data would run them) and lists the problems on Template.Problems.
//
//	set, err := template.Load("deploy/templates")
//
// # Processing one document
//
//	run, err := set.Run(ctx, text, template.RunOptions{PartyID: "CONTOSO", Mapper: m})
//	// run.Result: invoice2data's output (MarshalInvoice2dataJSON)
//	// run.Order: the canonical order; run.Outcome: success, rejected,
//	// ignored or deferred with a document.Reason
//
// The steps are also available one by one: Set.Match (invoice2data's
// template choice, with the trace of the templates tried; Set.Choose
// without it), Template.Extract (fields, lines, tables) and
// Template.Order (canonical order and reasons, DESIGN.md "Reasons from
// templates").
//
// # Regular expressions, numbers, dates
//
// Patterns are Python re syntax. They are translated to RE2 where possible
// and run on dlclark/regexp2 with MatchTimeout only when they need
// lookaround or backreferences. ParseNumber and ParseDate implement the
// number and date rules of docs/templates.md; an ambiguous numeric date
// without date_formats is an error, never a guess.
//
// # Time: templates are client code
//
// Templates arrive from clients (PUT /templates), so every pattern is
// untrusted code run on every document. Two bounds hold:
//
//   - Linear time where possible: every pattern RE2 can express runs on Go's
//     regexp, whose time is linear in the text, whatever the pattern. Only
//     lookaround, backreferences, atomic groups, possessive quantifiers,
//     conditionals and verbose mode go to the backtracking engine, where one
//     match can take exponential time ((a+)+b on a line of a's).
//   - One budget per run: RunOptions.Budget (ExtractOptions.Budget; else
//     the context's, WithBudget, which the services set from
//     INTAKE_TEMPLATE_BUDGET; else DefaultBudget) bounds the whole
//     run: template choice, options.replace, keywords, fields, every lines
//     block and row, tables, field replace and rules. Every search asks the
//     budget first and every loop over lines and rows stops once it is
//     spent; a backtracking match runs with MatchTimeout cut to what is
//     left of the budget, on a copy of the compiled pattern of its own (the
//     timeout is a field of regexp2's Regexp, shared by concurrent runs).
//     A spent budget stops the run with a *BudgetError (errors.Is ErrBudget)
//     naming the template and the step; the services report it as the
//     template's failure of that document, costing only its client.
//
// A done ctx stops the run the same way with ctx's error. A match already
// running on the backtracking engine cannot be interrupted: it ends at its
// timeout, at most MatchTimeout and never after the budget. A Go regexp
// search is not interrupted either; it is linear in the text.
//
// invoice2data's output (Result.Fields) keeps invoice2data's lax reading;
// the canonical order never invents or merges a value: amounts and
// quantities are read from the printed text with ParseAmount (strict
// grouping), a blank typed value is missing, several values for a
// single-valued field and a regex match timeout are errors naming the
// field (the run goes on: a timeout is the field's problem, a spent budget
// the run's). Template.CheckOrder runs the arithmetic checks of the docintake
// block (line amount, net total, gross total) on any canonical order, also
// one read from an attached structured document.
//
// YAML scalars are resolved as invoice2data's PyYAML resolves them (YAML
// 1.1: an unquoted 04080176 is a string, yes/no are booleans).
//
// The template language for template writers is documented in
// docs/templates.md.
package template
