package document_test

import (
	"slices"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

// The expected sets below are STATES.md's lifecycle written out by hand
// (not derived from the table under test).

func TestPending(t *testing.T) {
	for _, s := range document.States {
		want := s == document.StateReceived || s == document.StateDeferredForRetry
		require.Equal(t, want, s.Pending(), s)
	}
}

func TestReportsOutcome(t *testing.T) {
	for _, s := range document.States {
		want := s == document.StateProcessedSuccess || s == document.StateProcessedRejected || s == document.StateProcessedIgnored
		require.Equal(t, want, s.ReportsOutcome(), s)
	}
}

func TestAwaitsDelivery(t *testing.T) {
	for _, s := range document.States {
		want := s == document.StateProcessedSuccess || s == document.StateProcessedRejected ||
			s == document.StateProcessedIgnored || s == document.StateDLQ
		require.Equal(t, want, s.AwaitsDelivery(), s)
	}
}

func TestFinishedState(t *testing.T) {
	want := map[document.State]document.State{
		document.StateSentSuccess:  document.StateFinishedSuccess,
		document.StateSentRejected: document.StateFinishedRejected,
	}
	for _, s := range document.States {
		require.Equal(t, want[s], s.FinishedState(), s)
	}
}

func TestDeliverable(t *testing.T) {
	fwf := document.StateFinishedWithFailure
	still := map[document.State][]document.State{
		document.StateProcessedSuccess:  {document.StateProcessedSuccess, document.StateSentSuccess, document.StateFinishedSuccess, fwf},
		document.StateProcessedRejected: {document.StateProcessedRejected, document.StateSentRejected, document.StateFinishedRejected, fwf},
		document.StateProcessedIgnored:  {document.StateProcessedIgnored, document.StateFinishedIgnored, fwf},
		document.StateDLQ:               {document.StateDLQ, fwf},
	}
	for _, reported := range document.States {
		for _, cur := range document.States {
			want := reported == cur
			if set, ok := still[reported]; ok {
				want = false
				for _, s := range set {
					want = want || s == cur
				}
			}
			require.Equal(t, want, document.Deliverable(reported, cur), "%s reported, document %s", reported, cur)
		}
	}
	// A reprocessed or requeued document (back in received) makes an old
	// outcome's delivery stale.
	require.False(t, document.Deliverable(document.StateProcessedSuccess, document.StateReceived))
}

func TestSentState(t *testing.T) {
	fwf := document.StateFinishedWithFailure
	type key struct{ reported, cur document.State }
	want := map[key]document.State{
		{document.StateProcessedSuccess, document.StateProcessedSuccess}:   document.StateSentSuccess,
		{document.StateProcessedSuccess, fwf}:                              document.StateSentSuccess,
		{document.StateProcessedRejected, document.StateProcessedRejected}: document.StateSentRejected,
		{document.StateProcessedRejected, fwf}:                             document.StateSentRejected,
		{document.StateProcessedIgnored, document.StateProcessedIgnored}:   document.StateFinishedIgnored,
		{document.StateProcessedIgnored, fwf}:                              document.StateFinishedIgnored,
	}
	for _, reported := range document.States {
		for _, cur := range document.States {
			got := document.SentState(reported, cur)
			require.Equal(t, want[key{reported, cur}], got, "%s reported, document %s", reported, cur)
			if got != "" {
				require.True(t, document.CanTransition(cur, got), "%s → %s is not in Transitions", cur, got)
			}
		}
	}
}

func TestExhaustedState(t *testing.T) {
	waiting := map[document.State]bool{ // outcome states still waiting for their delivery
		document.StateProcessedSuccess: true, document.StateProcessedRejected: true, document.StateProcessedIgnored: true,
		document.StateSentSuccess: true, document.StateSentRejected: true,
	}
	for _, reported := range document.States {
		for _, cur := range document.States {
			var want document.State
			if reported.ReportsOutcome() && waiting[cur] {
				want = document.StateFinishedWithFailure
			}
			got := document.ExhaustedState(reported, cur)
			require.Equal(t, want, got, "%s reported, document %s", reported, cur)
			if got != "" {
				require.True(t, document.CanTransition(cur, got), "%s → %s is not in Transitions", cur, got)
			}
		}
	}
	// Notifications stay undelivered without moving the document.
	require.Empty(t, document.ExhaustedState(document.StateDLQ, document.StateDLQ))
	require.Empty(t, document.ExhaustedState(document.StateDeferredForRetry, document.StateDeferredForRetry))
}

// Every sent/finished state the table names is an edge of Transitions.
func TestMeaningEdgesAreTransitions(t *testing.T) {
	for _, s := range document.States {
		if f := s.FinishedState(); f != "" {
			require.True(t, document.CanTransition(s, f), "%s → %s", s, f)
		}
	}
}

// Every state of the interface but unknown has a verdict, the verdicts
// follow the state names of the interface (processed_/sent_/finished_
// success, rejected, ignored; dlq and finished_with_failure failed;
// received and deferred_for_retry pending), and a bulk reprocess picks
// what `intakectl reprocess --help` promises.
func TestVerdicts(t *testing.T) {
	want := map[document.State]document.Verdict{
		document.StateReceived: document.VerdictPending, document.StateDeferredForRetry: document.VerdictPending,
		document.StateDLQ: document.VerdictFailed, document.StateFinishedWithFailure: document.VerdictFailed,
		document.StateProcessedSuccess: document.VerdictSuccess, document.StateSentSuccess: document.VerdictSuccess,
		document.StateFinishedSuccess: document.VerdictSuccess, document.StateProcessedRejected: document.VerdictRejected,
		document.StateSentRejected: document.VerdictRejected, document.StateFinishedRejected: document.VerdictRejected,
		document.StateProcessedIgnored: document.VerdictIgnored, document.StateFinishedIgnored: document.VerdictIgnored,
		document.StateUnknown: "",
	}
	for _, s := range document.States {
		if got := s.Verdict(); got != want[s] {
			t.Errorf("%s: verdict %q, want %q", s, got, want[s])
		}
	}
	retried := document.StatesWhere(document.State.RetriedByDefault)
	wantRetried := []document.State{document.StateDLQ, document.StateFinishedRejected, document.StateFinishedWithFailure}
	if !slices.Equal(retried, wantRetried) {
		t.Errorf("retried by default: %v, want %v", retried, wantRetried)
	}
}
