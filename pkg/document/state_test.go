package document_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

// The rows of DESIGN.md's state machine, written out independently of the
// Transitions table so that a changed table fails here.
var designRows = []struct{ from, to []document.State }{
	{[]document.State{"received", "deferred_for_retry"}, []document.State{"processed_success", "processed_rejected", "processed_ignored"}},
	{[]document.State{"received", "deferred_for_retry"}, []document.State{"deferred_for_retry"}},
	{[]document.State{"received", "deferred_for_retry"}, []document.State{"dlq"}},
	{[]document.State{"processed_success"}, []document.State{"sent_success"}},
	{[]document.State{"processed_rejected"}, []document.State{"sent_rejected"}},
	{[]document.State{"sent_success"}, []document.State{"finished_success"}},
	{[]document.State{"sent_rejected"}, []document.State{"finished_rejected"}},
	{[]document.State{"processed_ignored"}, []document.State{"finished_ignored"}},
	{[]document.State{"processed_success", "processed_rejected", "processed_ignored", "sent_success", "sent_rejected"}, []document.State{"finished_with_failure"}},
	{[]document.State{"dlq"}, []document.State{"received"}},
	{[]document.State{"dlq"}, []document.State{"finished_with_failure"}},
	// Not in DESIGN.md's table; issue 5 asks that a failed delivery can be
	// redelivered by an operator and then end in finished_*.
	{[]document.State{"finished_with_failure"}, []document.State{"sent_success", "sent_rejected", "finished_ignored"}},
	// DESIGN.md's last row (issue 12): reprocess with the current template
	// version (dlq → received is listed above).
	{[]document.State{"finished_success", "finished_rejected", "finished_ignored", "finished_with_failure"}, []document.State{"received"}},
	// Issue 27: an operator approves a corrected order held for review.
	{[]document.State{"processed_rejected"}, []document.State{"processed_success"}},
	// Issue 28: the approved order repeats a delivered PO: ignored as its
	// duplicate.
	{[]document.State{"processed_rejected"}, []document.State{"processed_ignored"}},
}

func TestCanTransitionEveryPair(t *testing.T) {
	t.Parallel()
	want := map[[2]document.State]bool{}
	for _, r := range designRows {
		for _, f := range r.from {
			for _, to := range r.to {
				want[[2]document.State{f, to}] = true
			}
		}
	}
	require.Len(t, document.Transitions, len(want), "transition table has rows DESIGN.md does not")
	// Every pair of the 13 states: allowed exactly when DESIGN.md lists it.
	for _, from := range document.States {
		for _, to := range document.States {
			got := document.CanTransition(from, to)
			require.Equal(t, want[[2]document.State{from, to}], got, "%s → %s", from, to)
			if got {
				require.NoError(t, document.CheckTransition(from, to))
			} else {
				err := document.CheckTransition(from, to)
				require.Error(t, err)
				require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
			}
		}
	}
	require.True(t, document.CanTransition("", document.StateReceived), "creation")
	require.False(t, document.CanTransition("", document.StateProcessedSuccess))
	for _, s := range document.States {
		require.False(t, document.CanTransition(s, document.StateUnknown), "unknown is never written")
	}
}

func TestStatesWireForm(t *testing.T) {
	t.Parallel()
	require.Len(t, document.States, 13)
	for _, s := range document.States {
		require.Regexp(t, `^[a-z_]+$`, string(s))
		got, err := document.ParseState(s.Name())
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	require.Equal(t, "PROCESSED_SUCCESS", document.StateProcessedSuccess.Name())
	_, err := document.ParseState("bogus")
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
}

func TestReasonWireValues(t *testing.T) {
	t.Parallel()
	want := map[document.Reason]string{
		document.ReasonCannotParseDeliveryAddress: "cannot_parse_delivery_address",
		document.ReasonCannotParseItems:           "cannot_parse_items",
		document.ReasonDocumentIDMissing:          "document_id_missing",
		document.ReasonMappingNotResolved:         "mapping_not_resolved",
		document.ReasonNotAnInvoice:               "not_an_order",
		document.ReasonNotAnOrder:                 "not_an_order",
		document.ReasonNotAnOrderResponse:         "not_an_order_response",
		document.ReasonVATIDMissing:               "vat_id_missing",
		document.ReasonUnknownFormat:              "unknown_format",
	}
	require.Len(t, document.Reasons, len(want))
	for _, r := range document.Reasons {
		require.Equal(t, want[r], r.WireValue(), string(r))
	}
	r, err := document.ParseReason("not_an_order")
	require.NoError(t, err)
	require.Equal(t, document.ReasonNotAnOrder, r)
}

func TestStatusFor(t *testing.T) {
	t.Parallel()
	cases := map[document.State]document.Status{
		"processed_success":  "success",
		"processed_rejected": "rejected",
		"processed_ignored":  "ignored",
		"deferred_for_retry": "deferred_for_retry",
		"dlq":                "failed",
	}
	for s, want := range cases {
		got, ok := document.StatusFor(s)
		require.True(t, ok)
		require.Equal(t, want, got)
	}
	_, ok := document.StatusFor(document.StateReceived)
	require.False(t, ok)
}

func TestResultMode(t *testing.T) {
	t.Parallel()
	m, err := document.ParseResultMode("no_items")
	require.NoError(t, err)
	require.Equal(t, document.ResultModeNoItems, m)
	m, err = document.ParseResultMode("")
	require.NoError(t, err)
	require.Equal(t, document.ResultMode(""), m)
	for _, bad := range []string{"NO_ITEMS", "items", " no_items"} {
		_, err := document.ParseResultMode(bad)
		require.Equal(t, document.EINVALID, document.ErrorKind(err), bad)
	}
}

// STATES.md's mermaid diagram must list exactly the transition table.
func TestStatesDocMatchesTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("STATES.md")
	require.NoError(t, err)
	edge := regexp.MustCompile(`(?m)^\s*(\w+)\s*-->\s*(\w+)`)
	got := map[[2]document.State]bool{}
	for _, m := range edge.FindAllStringSubmatch(string(b), -1) {
		if m[1] == "start" || m[1] == "[*]" {
			continue
		}
		got[[2]document.State{document.State(m[1]), document.State(m[2])}] = true
	}
	want := map[[2]document.State]bool{}
	for _, tr := range document.Transitions {
		want[[2]document.State{tr.From, tr.To}] = true
	}
	require.Equal(t, want, got)
}
