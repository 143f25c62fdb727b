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

// ProcessSubject is where a client's extraction jobs go.
func ProcessSubject(prefix, clientID string) string { return prefix + ".process." + clientID }

// DeliverSubject is where a client's webhook jobs go.
func DeliverSubject(prefix, clientID string) string { return prefix + ".deliver." + clientID }

// Process builds the extraction job for attempt n (1-based) of d.
func Process(prefix string, d document.Document, n int, now time.Time) Message {
	b, err := proto.Marshal(&jobspb.ProcessJob{LogId: d.LogID, DocumentId: d.ID, ClientId: d.ClientID,
		Attempt: uint32(n), EnqueuedAt: timestamppb.New(now)})
	if err != nil {
		panic(fmt.Sprintf("marshal process job: %v", err)) // a plain message of strings cannot fail
	}
	return Message{Subject: ProcessSubject(prefix, d.ClientID), MsgID: fmt.Sprintf("%s:process:%d", d.LogID, n), Payload: b}
}

// Deliver builds the webhook job announcing d's state. deliveryID is the
// stable webhook-id of this delivery (the same for all its attempts).
func Deliver(prefix string, d document.Document, deliveryID string, now time.Time) Message {
	st, _ := document.StatusFor(d.State)
	b, err := proto.Marshal(&jobspb.DeliverJob{LogId: d.LogID, DocumentId: d.ID, ClientId: d.ClientID,
		State: string(d.State), Status: string(st), DeliveryId: deliveryID, Attempt: 1, EnqueuedAt: timestamppb.New(now)})
	if err != nil {
		panic(fmt.Sprintf("marshal deliver job: %v", err))
	}
	return Message{Subject: DeliverSubject(prefix, d.ClientID), MsgID: "deliver:" + deliveryID, Payload: b}
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
