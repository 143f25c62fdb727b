// Package document is the domain of docintake: document states and the
// transition table, webhook statuses and reasons, result modes and the
// application error type. It depends on nothing else in the project, so every
// other package may import it.
package document

import (
	"fmt"
	"strings"
)

// State is a document's processing state. Its wire form (JSON, database) is
// the lowercase name, for example "processed_success".
type State string

// The 13 states of the interface. StateUnknown exists for completeness of the
// contract and is never written.
const (
	StateReceived            State = "received"
	StateDeferredForRetry    State = "deferred_for_retry"
	StateDLQ                 State = "dlq"
	StateProcessedIgnored    State = "processed_ignored"
	StateProcessedRejected   State = "processed_rejected"
	StateProcessedSuccess    State = "processed_success"
	StateSentRejected        State = "sent_rejected"
	StateSentSuccess         State = "sent_success"
	StateFinishedSuccess     State = "finished_success"
	StateFinishedRejected    State = "finished_rejected"
	StateFinishedIgnored     State = "finished_ignored"
	StateFinishedWithFailure State = "finished_with_failure"
	StateUnknown             State = "unknown"
)

// States lists every state in the order of the interface.
var States = []State{
	StateReceived, StateDeferredForRetry, StateDLQ, StateProcessedIgnored,
	StateProcessedRejected, StateProcessedSuccess, StateSentRejected,
	StateSentSuccess, StateFinishedSuccess, StateFinishedRejected,
	StateFinishedIgnored, StateFinishedWithFailure, StateUnknown,
}

// ParseState accepts the wire form or the upper-case name of the interface.
// It returns EINVALID for anything else.
func ParseState(s string) (State, error) {
	st := State(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range States {
		if v == st {
			return st, nil
		}
	}
	return "", Errorf(EINVALID, "unknown document state %q", s)
}

// Name is the upper-case name the interface uses (PROCESSED_SUCCESS).
func (s State) Name() string { return strings.ToUpper(string(s)) }

// Final reports whether no automatic transition leaves s.
func (s State) Final() bool {
	switch s {
	case StateFinishedSuccess, StateFinishedRejected, StateFinishedIgnored, StateFinishedWithFailure:
		return true
	}
	return false
}

// Transition is one allowed edge of the state machine.
type Transition struct {
	From State
	To   State
	When string
}

// Transitions is DESIGN.md's state machine as data. A state change anywhere in
// the system must be one of these edges; the store checks it with
// CanTransition before its compare-and-set.
var Transitions = []Transition{
	{StateReceived, StateProcessedSuccess, "extraction finished"},
	{StateReceived, StateProcessedRejected, "extraction finished"},
	{StateReceived, StateProcessedIgnored, "extraction finished"},
	{StateDeferredForRetry, StateProcessedSuccess, "extraction finished"},
	{StateDeferredForRetry, StateProcessedRejected, "extraction finished"},
	{StateDeferredForRetry, StateProcessedIgnored, "extraction finished"},
	{StateReceived, StateDeferredForRetry, "a mapping lookup failed, attempts left"},
	{StateDeferredForRetry, StateDeferredForRetry, "a mapping lookup failed, attempts left"},
	{StateReceived, StateDLQ, "attempts exhausted, unreadable PDF, processing crashed or timed out repeatedly"},
	{StateDeferredForRetry, StateDLQ, "attempts exhausted, unreadable PDF, processing crashed or timed out repeatedly"},
	{StateProcessedSuccess, StateSentSuccess, "webhook answered 2xx"},
	{StateProcessedRejected, StateSentRejected, "webhook answered 2xx"},
	{StateSentSuccess, StateFinishedSuccess, "delivery recorded and job closed"},
	{StateSentRejected, StateFinishedRejected, "delivery recorded and job closed"},
	{StateProcessedIgnored, StateFinishedIgnored, "closed"},
	{StateProcessedSuccess, StateFinishedWithFailure, "webhook retry schedule exhausted or endpoint disabled"},
	{StateProcessedRejected, StateFinishedWithFailure, "webhook retry schedule exhausted or endpoint disabled"},
	{StateProcessedIgnored, StateFinishedWithFailure, "webhook retry schedule exhausted or endpoint disabled"},
	{StateSentSuccess, StateFinishedWithFailure, "webhook retry schedule exhausted or endpoint disabled"},
	{StateSentRejected, StateFinishedWithFailure, "webhook retry schedule exhausted or endpoint disabled"},
	{StateDLQ, StateReceived, "an operator re-queues it"},
	{StateDLQ, StateFinishedWithFailure, "an operator gives up on it"},
	// Issue 5: a document whose delivery failed keeps its result and can be
	// redelivered; when the client finally answers 2xx it finishes normally.
	{StateFinishedWithFailure, StateSentSuccess, "an operator's redelivery was answered 2xx"},
	{StateFinishedWithFailure, StateSentRejected, "an operator's redelivery was answered 2xx"},
	{StateFinishedWithFailure, StateFinishedIgnored, "an operator's redelivery was answered 2xx"},
	// Issue 12 (DESIGN.md's last row): a finished document is reprocessed
	// with the current template version as a new attempt (dlq → received
	// is the row above).
	{StateFinishedSuccess, StateReceived, "reprocessed with the current template version"},
	{StateFinishedRejected, StateReceived, "reprocessed with the current template version"},
	{StateFinishedIgnored, StateReceived, "reprocessed with the current template version"},
	{StateFinishedWithFailure, StateReceived, "reprocessed with the current template version"},
	// Issue 27: a rejection held for review (not delivered yet) becomes a
	// success when an operator approves a corrected order.
	{StateProcessedRejected, StateProcessedSuccess, "an operator approved a corrected order held for review"},
	// Issue 28: an approved order whose PO was already delivered with the
	// same content is ignored as its duplicate, as the processor ignores a
	// copy.
	{StateProcessedRejected, StateProcessedIgnored, "an operator approved an order held for review that repeats a delivered PO"},
}

var allowed = func() map[[2]State]bool {
	m := make(map[[2]State]bool, len(Transitions))
	for _, t := range Transitions {
		m[[2]State{t.From, t.To}] = true
	}
	return m
}()

// CanTransition reports whether the state machine allows from → to. The empty
// state stands for "no row yet": only received may be created.
func CanTransition(from, to State) bool {
	if from == "" {
		return to == StateReceived
	}
	return allowed[[2]State{from, to}]
}

// CheckTransition returns nil when from → to is allowed and an ECONFLICT error
// naming both states otherwise.
func CheckTransition(from, to State) error {
	if CanTransition(from, to) {
		return nil
	}
	return Errorf(ECONFLICT, "transition %s → %s is not allowed", from, to)
}

// String implements fmt.Stringer.
func (s State) String() string { return string(s) }

var _ fmt.Stringer = State("")
