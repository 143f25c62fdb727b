// Package jobs builds the messages that carry work between the services:
// their subjects, their JetStream dedup ids and their protobuf payloads
// (ids and attempt metadata only, never document bytes).
//
// Dedup ids are deterministic per (document, kind, attempt): the same job
// published twice — an outbox relay killed between publish and mark, a
// sweeper racing a relay — is stored once by the broker.
package jobs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobspb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Message is a job, and the one shape of it everywhere: the outbox row
// that carries it (store.OutboxRow) and the message the relay publishes
// (queue.OutboxMessage) are this type. MsgID is the JetStream dedup id, so
// a row published twice (relay killed between publish and mark) is stored
// once by the broker.
type Message struct {
	// ID is the outbox row's id; 0 until the row is written.
	ID      int64
	Subject string
	MsgID   string
	Payload []byte
	// Headers are published with the message (trace context); nil for none.
	Headers map[string]string
}

// DefaultSubjectPrefix is the first token of every job subject unless
// INTAKE_SUBJECT_PREFIX says otherwise.
const DefaultSubjectPrefix = "intake"

// Subject names: every job goes to <prefix>.<kind>.<client_id>, where kind is
// one of these; the stream's and the consumers' filters are
// <prefix>.<kind>.>. Client ids ([a-z0-9_-]) are valid subject tokens.
const (
	processKind = "process"
	deliverKind = "deliver"
)

func subject(prefix, kind, clientID string) string { return prefix + "." + kind + "." + clientID }

// ProcessSubject is where a client's extraction jobs go:
// "<prefix>.process.<client_id>".
func ProcessSubject(prefix, clientID string) string { return subject(prefix, processKind, clientID) }

// DeliverSubject is where a client's webhook jobs go:
// "<prefix>.deliver.<client_id>".
func DeliverSubject(prefix, clientID string) string { return subject(prefix, deliverKind, clientID) }

// ProcessFilter matches every client's extraction jobs: "<prefix>.process.>",
// the processor consumer's filter.
func ProcessFilter(prefix string) string { return subject(prefix, processKind, ">") }

// DeliverFilter matches every client's webhook jobs: "<prefix>.deliver.>",
// the dispatcher consumer's filter.
func DeliverFilter(prefix string) string { return subject(prefix, deliverKind, ">") }

// Dedup ids (Nats-Msg-Id). Their formats are stored in outbox rows and
// compared by the stream within its duplicates window, so they must not
// change. A deliver job has two formats because its two publishers need
// opposite things:
//   - the outbox's deliver job (Deliver) is published at least once by a
//     relay that may die between publish and mark; every copy must dedupe,
//     so the id is the delivery's alone: "deliver:<delivery_id>";
//   - the dispatcher's republish of a due retry (Republish) must reach the
//     stream even when an earlier copy of the same delivery was published
//     within the window, so the id adds the claim generation that the
//     store handed out for this retry: "deliver:<delivery_id>:<claim>". A
//     repeated publish of one claim is still dropped.

// ProcessMsgID is the dedup id of attempt n (1-based) of the extraction job
// of the document logID: "<log_id>:process:<n>".
func ProcessMsgID(logID string, n int) string {
	return logID + ":" + processKind + ":" + strconv.Itoa(n)
}

// ProcessMsgLogID returns the log id of a ProcessMsgID; ok is false for
// any other id.
func ProcessMsgLogID(msgID string) (logID string, ok bool) {
	logID, _, ok = strings.Cut(msgID, ":"+processKind+":")
	return logID, ok
}

// DeliverMsgID is the dedup id of the outbox's deliver job of a delivery:
// "deliver:<delivery_id>".
func DeliverMsgID(deliveryID string) string { return deliverKind + ":" + deliveryID }

// RepublishMsgID is the dedup id of the dispatcher's republish of claim
// claim of a delivery: "deliver:<delivery_id>:<claim>".
func RepublishMsgID(deliveryID string, claim int) string {
	return DeliverMsgID(deliveryID) + ":" + strconv.Itoa(claim)
}

// Process builds the extraction job for attempt n (1-based) of d.
func Process(prefix string, d document.Document, n int, now time.Time) Message {
	b := marshal(&jobspb.ProcessJob{LogId: d.LogID, DocumentId: d.ID, ClientId: d.ClientID,
		Attempt: uint32(n), EnqueuedAt: timestamppb.New(now)})
	return Message{Subject: ProcessSubject(prefix, d.ClientID), MsgID: ProcessMsgID(d.LogID, n), Payload: b}
}

// Delivery is the part of a webhook delivery (store.Delivery) a deliver job
// carries.
type Delivery struct {
	ID         string // the stable webhook-id of the delivery
	LogID      string
	DocumentID string
	ClientID   string
	State      document.State  // the state being reported
	Status     document.Status // the webhook status for it
}

// Deliver builds the webhook job announcing d's state, committed to the
// outbox with the state change. deliveryID is the stable webhook-id of this
// delivery (the same for all its attempts).
func Deliver(prefix string, d document.Document, deliveryID string, now time.Time) Message {
	st, _ := document.StatusFor(d.State)
	dv := Delivery{ID: deliveryID, LogID: d.LogID, DocumentID: d.ID, ClientID: d.ClientID, State: d.State, Status: st}
	return deliver(prefix, dv, 1, DeliverMsgID(deliveryID), now)
}

// Republish builds the webhook job of claim claim of dv, which the
// dispatcher publishes itself when a retry falls due (see RepublishMsgID).
func Republish(prefix string, dv Delivery, claim int, now time.Time) Message {
	return deliver(prefix, dv, claim, RepublishMsgID(dv.ID, claim), now)
}

func deliver(prefix string, dv Delivery, attempt int, msgID string, now time.Time) Message {
	b := marshal(&jobspb.DeliverJob{LogId: dv.LogID, DocumentId: dv.DocumentID, ClientId: dv.ClientID,
		State: string(dv.State), Status: string(dv.Status), DeliveryId: dv.ID, Attempt: uint32(attempt),
		EnqueuedAt: timestamppb.New(now)})
	return Message{Subject: DeliverSubject(prefix, dv.ClientID), MsgID: msgID, Payload: b}
}

// marshal encodes a job; a message of strings, numbers and a timestamp
// cannot fail to encode.
func marshal(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("marshal job: %v", err))
	}
	return b
}

// ParseProcess decodes an extraction job. A payload that does not decode is
// permanent garbage: callers terminate the message.
func ParseProcess(b []byte) (*jobspb.ProcessJob, error) {
	var j jobspb.ProcessJob
	if err := proto.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decode process job: %w", err)
	}
	if j.GetLogId() == "" || j.GetDocumentId() == "" {
		return nil, fmt.Errorf("decode process job: missing ids")
	}
	return &j, nil
}

// ParseDeliver decodes a webhook job.
func ParseDeliver(b []byte) (*jobspb.DeliverJob, error) {
	var j jobspb.DeliverJob
	if err := proto.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decode deliver job: %w", err)
	}
	if j.GetLogId() == "" || j.GetDocumentId() == "" {
		return nil, fmt.Errorf("decode deliver job: missing ids")
	}
	return &j, nil
}
