package document

// What each state means to the pipeline, beside the Transitions table: the
// questions the processor and the dispatcher ask about a state are answered
// here, from one table, so adding a state means adding its row here (and
// its edges to Transitions) rather than teaching every service about it.

// meaning is one row of the state table.
type meaning struct {
	// pending: a process job still has work on the document.
	pending bool
	// outcome: a processing outcome the client hears about, whose delivery
	// moves the document on (to sent, or finished_with_failure when the
	// retry schedule is exhausted).
	outcome bool
	// awaitsDelivery: entering the state queues a deliver job whose
	// delivery the dispatcher records (outcomes and the failed notice of
	// dlq), so a document resting here without a delivery lost its job.
	awaitsDelivery bool
	// sent is the state a 2xx answer to the delivery of this state moves
	// the document to ("" when a delivery does not move it).
	sent State
	// finished is the state a recorded delivery closes this sent state
	// with ("" when the state is not a sent state).
	finished State
	// deliverableFrom lists the states, besides this one, in which a
	// delivery reporting this state is still worth sending: the document
	// moved on because of this very delivery (sent, finished) or gave up on
	// it (finished_with_failure, redeliverable).
	deliverableFrom []State
	// verdict is what the state says about the document's processing, for
	// counts by outcome (the ops console's template usage) and the
	// invariants the database checks (a success has its results).
	verdict Verdict
	// retry: a finished document a bulk reprocess picks by default
	// (`intakectl reprocess` without --state): it ended without an order
	// the client could use.
	retry bool
}

// Verdict is what a state says about a document's processing: still
// pending, or which outcome it came to.
type Verdict string

// The verdicts.
const (
	VerdictPending  Verdict = "pending"
	VerdictSuccess  Verdict = "success"
	VerdictRejected Verdict = "rejected"
	VerdictIgnored  Verdict = "ignored"
	VerdictFailed   Verdict = "failed"
)

var meanings = map[State]meaning{
	StateReceived:         {pending: true, verdict: VerdictPending},
	StateDeferredForRetry: {pending: true, verdict: VerdictPending},
	StateDLQ: {awaitsDelivery: true, deliverableFrom: []State{StateFinishedWithFailure},
		verdict: VerdictFailed, retry: true},
	StateProcessedIgnored: {outcome: true, awaitsDelivery: true, sent: StateFinishedIgnored,
		deliverableFrom: []State{StateFinishedIgnored, StateFinishedWithFailure}, verdict: VerdictIgnored},
	StateProcessedRejected: {outcome: true, awaitsDelivery: true, sent: StateSentRejected,
		deliverableFrom: []State{StateSentRejected, StateFinishedRejected, StateFinishedWithFailure}, verdict: VerdictRejected},
	StateProcessedSuccess: {outcome: true, awaitsDelivery: true, sent: StateSentSuccess,
		deliverableFrom: []State{StateSentSuccess, StateFinishedSuccess, StateFinishedWithFailure}, verdict: VerdictSuccess},
	StateSentRejected:        {finished: StateFinishedRejected, verdict: VerdictRejected},
	StateSentSuccess:         {finished: StateFinishedSuccess, verdict: VerdictSuccess},
	StateFinishedSuccess:     {verdict: VerdictSuccess},
	StateFinishedRejected:    {verdict: VerdictRejected, retry: true},
	StateFinishedIgnored:     {verdict: VerdictIgnored},
	StateFinishedWithFailure: {verdict: VerdictFailed, retry: true},
}

// Verdict is what s says about the document's processing (VerdictPending
// for received and deferred_for_retry, "" for unknown).
func (s State) Verdict() Verdict { return meanings[s].verdict }

// RetriedByDefault reports whether a bulk reprocess picks documents in s
// when no state is named: finished_rejected, finished_with_failure and dlq.
func (s State) RetriedByDefault() bool { return meanings[s].retry }

// StatesWhere lists the states, in the interface's order, for which pred
// holds: what SQL that filters on a kind of state binds as its list
// (state = ANY($n)), so the list is never written out twice.
func StatesWhere(pred func(State) bool) []State {
	var out []State
	for _, s := range States {
		if pred(s) {
			out = append(out, s)
		}
	}
	return out
}

// Pending reports whether a process job still has work on a document in s
// (received, deferred_for_retry); a process job for any other state is stale.
func (s State) Pending() bool { return meanings[s].pending }

// ReportsOutcome reports whether s is a processing outcome (processed_*)
// whose delivery moves the document on: to sent (or finished_ignored) on
// 2xx, to finished_with_failure when the retry schedule is exhausted.
// Notifications (deferred_for_retry, dlq) move nothing.
func (s State) ReportsOutcome() bool { return meanings[s].outcome }

// AwaitsDelivery reports whether a document in s waits for the dispatcher
// to record the delivery of the job that entering s queued (processed_*,
// dlq): the sweeper's test for a lost deliver job.
func (s State) AwaitsDelivery() bool { return meanings[s].awaitsDelivery }

// FinishedState is the state that closes the sent state s once its delivery
// is recorded (sent_success → finished_success), "" when s is not a sent
// state.
func (s State) FinishedState() State { return meanings[s].finished }

// Deliverable reports whether a delivery reporting state reported is still
// worth sending when the document is in cur. Outcomes stay deliverable after
// a failed delivery (redelivery) and after success (an operator resends a
// result the client lost); a deferral or dlq notice is dropped once the
// document has moved on, because a newer outcome supersedes it.
func Deliverable(reported, cur State) bool {
	if reported == cur {
		return true
	}
	for _, s := range meanings[reported].deliverableFrom {
		if s == cur {
			return true
		}
	}
	return false
}

// SentState is the state a 2xx answer to a delivery reporting reported
// moves a document in cur to, "" when it moves nothing (a notification, or
// the document is sent already). A document that gave up on the delivery
// (finished_with_failure) is moved as well: the operator redelivered it.
func SentState(reported, cur State) State {
	m := meanings[reported]
	if m.sent != "" && (cur == reported || cur == StateFinishedWithFailure) {
		return m.sent
	}
	return ""
}

// ExhaustedState is the state a document in cur moves to when the retry
// schedule of a delivery reporting reported is exhausted:
// finished_with_failure for an outcome whose document still waits for its
// delivery (processed_* or sent_*), "" otherwise (notifications just stay
// undelivered).
func ExhaustedState(reported, cur State) State {
	if !reported.ReportsOutcome() {
		return ""
	}
	if m := meanings[cur]; m.outcome || m.finished != "" {
		return StateFinishedWithFailure
	}
	return ""
}
