package queue

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// A cluster still placing its peers answers 10005 for a while (the chaos
// cluster test's ingest exited on it when it started before the third NATS
// server had joined): the API call is retried, a bounded number of times.
func TestRetryAPIWaitsForAFormingCluster(t *testing.T) {
	noPeers := &jetstream.APIError{Code: 400, ErrorCode: jsClusterNoPeers, Description: "no suitable peers for placement, peer offline"}
	calls := 0
	err := retryAPI(context.Background(), func(context.Context) error {
		calls++
		if calls < 3 {
			return noPeers
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls, want success on the third", err, calls)
	}
	if clusterForming(&jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamNameInUse}) {
		t.Error("a stream name in use is a refusal, not a cluster forming")
	}
	if !clusterForming(errors.Join(errors.New("ensure"), noPeers)) {
		t.Error("a wrapped 10005 is a cluster forming")
	}
}
