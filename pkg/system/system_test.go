package system_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/queue/queuetest"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/pkg/system"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

var errKilled = errors.New("relay killed after publish, before the delete")

// The relay is "killed" between the broker's ack and the outbox commit: the
// row stays in the outbox and is published again, with the same Nats-Msg-Id, by
// the next relay. The stream must hold the job once.
func TestRelayKilledBetweenPublishAndDelete(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	js := queuetest.JetStream(t)
	qcfg := queuetest.Ensure(t, js, nil)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme"}))

	var logIDs []string
	for i := range 3 {
		d := document.Document{ID: uuid.Must(uuid.NewV7()).String(), LogID: uuid.NewString(), ClientID: "acme",
			MessageID: "m" + string(rune('a'+i)), FileSHA256: make([]byte, 32), Filename: "f.pdf", Template: "t",
			SourceKey: "sources/m" + string(rune('a'+i)) + ".pdf"}
		m := jobs.Process(qcfg.SubjectPrefix, d, 1, time.Now())
		_, created, err := st.CreateDocument(ctx, d, m)
		require.NoError(t, err)
		require.True(t, created)
		logIDs = append(logIDs, d.LogID)
	}
	pub := queue.NewPublisher(js, qcfg.Stream)
	src := st

	// First relay: publishes the first row, then dies before deleting it.
	_, err := src.RelayOutbox(ctx, 10, 0, func(ctx context.Context, batch []queue.OutboxMessage) []error {
		errs := make([]error, len(batch))
		for i, m := range batch {
			errs[i] = errKilled
			if i == 0 {
				if err := pub.Publish(ctx, m.Subject, m.MsgID, m.Payload); err != nil {
					errs[i] = err
				}
			}
		}
		return errs
	})
	require.ErrorIs(t, err, errKilled)
	pending, err := st.PendingOutbox(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, pending, "nothing was deleted")

	// A fresh relay publishes everything; the first job is deduplicated.
	relay := queue.NewRelay(src, pub, zapNop(), queue.RelayOptions{})
	n, err := relay.Flush(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)

	stream, err := js.Stream(ctx, qcfg.Stream)
	require.NoError(t, err)
	info, err := stream.Info(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, info.State.Msgs, "one message per document")
	for i, logID := range logIDs {
		msg, err := stream.GetMsg(ctx, uint64(i+1))
		require.NoError(t, err)
		require.Equal(t, logID+":process:1", msg.Header.Get(jetstream.MsgIDHeader))
	}
}

func TestClientsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, uuid.NewString()+".yaml")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	good := write(`clients:
  - id: acme
    name: ACME
    token_sha256: ["c91cbbedf8c712e8e2b7517ddeca8fe4fde839ebd8339e0b2001363002b37712"]
    webhook_url: http://127.0.0.1:9099/hook
    webhook_token: wt
`)
	specs, err := system.LoadClientsFile(good)
	require.NoError(t, err)
	st := storetest.Store(t)
	require.NoError(t, system.ApplyClients(t.Context(), st, specs))
	require.NoError(t, system.ApplyClients(t.Context(), st, specs), "applying twice is an upsert")
	c, err := st.ClientByToken(t.Context(), "dev-token")
	require.NoError(t, err)
	require.Equal(t, "acme", c.ID)
	require.Equal(t, "wt", c.WebhookToken)

	for name, body := range map[string]string{
		"bad id":    "clients:\n  - id: ACME\n",
		"bad hash":  "clients:\n  - id: a\n    token_sha256: [abc]\n",
		"typo key":  "clients:\n  - id: a\n    token_sha: [abc]\n",
		"duplicate": "clients:\n  - id: a\n  - id: a\n",
		"not yaml":  "clients: [",
	} {
		_, err := system.LoadClientsFile(write(body))
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "clients file", name)
	}
	_, err = system.LoadClientsFile(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
}
