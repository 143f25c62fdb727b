package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func deliveryFixture(t *testing.T, s *store.Store, ctx context.Context) (document.Document, store.Delivery) {
	t.Helper()
	require.NoError(t, s.SetWebhookEnabled(ctx, "acme", true))
	d, job := newDoc("acme", "m-dlv", "pdf")
	created, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	moved, err := s.Transition(ctx, succeeded(store.Change{DocumentID: created.ID, From: document.StateReceived,
		To: document.StateProcessedSuccess, Actor: "test"}, created.LogID))
	require.NoError(t, err)
	dv, err := s.EnsureDelivery(ctx, store.Delivery{ID: "msg_1", DocumentID: moved.ID, ClientID: "acme", LogID: moved.LogID,
		State: document.StateProcessedSuccess, Status: document.StatusSuccess}, time.Minute)
	require.NoError(t, err)
	return moved, dv
}

func TestDeliveryLifecycle(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	doc, dv := deliveryFixture(t, s, ctx)
	require.Equal(t, store.DeliveryPending, dv.Outcome)
	require.Equal(t, 1, dv.Claim)
	again, err := s.EnsureDelivery(ctx, store.Delivery{ID: "msg_1", DocumentID: doc.ID, ClientID: "acme", LogID: doc.LogID,
		State: document.StateDLQ, Status: document.StatusFailed}, time.Minute)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, again.State, "an existing delivery is returned unchanged")

	claimed, res, err := s.ClaimDelivery(ctx, "msg_1", time.Minute, slotOf("acme", 4))
	require.NoError(t, err)
	require.Equal(t, store.Claimed, res)
	require.Equal(t, 1, claimed.Attempts)
	_, res, err = s.ClaimDelivery(ctx, "msg_1", time.Minute, slotOf("acme", 4))
	require.NoError(t, err)
	require.Equal(t, store.ClaimTaken, res, "a leased delivery is not claimed twice")

	// A failed attempt: stored with a cleaned body prefix, retry scheduled.
	body := strings.Repeat("x", 2000) + "\x00\xff"
	next := time.Now().Add(-time.Second)
	_, err = s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 1, StatusCode: 500,
		Latency: 15 * time.Millisecond, Error: "webhook answered 500", BodyPrefix: body}, Outcome: store.DeliveryPending,
		CountFailure: true, NextAttempt: next})
	require.NoError(t, err)
	atts, err := s.DeliveryAttempts(ctx, "msg_1")
	require.NoError(t, err)
	require.Len(t, atts, 1)
	require.Equal(t, 500, atts[0].StatusCode)
	require.Len(t, atts[0].BodyPrefix, store.MaxBodyPrefix)
	require.InDelta(t, 15*time.Millisecond, atts[0].Latency, float64(time.Millisecond))

	// Due now: the scheduler claims it once, with a new claim number.
	var published []store.Delivery
	n, err := s.ClaimDueDeliveries(ctx, 10, time.Minute, func(_ context.Context, d store.Delivery) error {
		published = append(published, d)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 2, published[0].Claim)
	n, err = s.ClaimDueDeliveries(ctx, 10, time.Minute, func(context.Context, store.Delivery) error { return nil })
	require.NoError(t, err)
	require.Zero(t, n, "not due again before the backstop")

	// Disabled clients' deliveries are not due.
	require.NoError(t, s.RescheduleDelivery(ctx, "msg_1", time.Now().Add(-time.Second)))
	require.NoError(t, s.SetWebhookEnabled(ctx, "acme", false))
	n, err = s.ClaimDueDeliveries(ctx, 10, time.Minute, func(context.Context, store.Delivery) error { return nil })
	require.NoError(t, err)
	require.Zero(t, n)
	b, err := s.DeliveryBacklog(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, b.Pending)
	require.Equal(t, 2, b.DisabledClients, "acme and globex (created disabled by setup)")
	require.Equal(t, 1, b.WaitingOnDisable)
	require.NoError(t, s.SetWebhookEnabled(ctx, "acme", true))

	// Success with the document's transition in the same transaction.
	_, res, err = s.ClaimDelivery(ctx, "msg_1", time.Minute, slotOf("acme", 4))
	require.NoError(t, err)
	require.Equal(t, store.Claimed, res)
	got, err := s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 2, StatusCode: 200},
		Outcome: store.DeliveryDelivered, Changes: []store.Change{{DocumentID: doc.ID, From: document.StateProcessedSuccess,
			To: document.StateSentSuccess, Actor: "dispatcher", Detail: "delivery msg_1 attempt 2"}}})
	require.NoError(t, err)
	require.Equal(t, store.DeliveryDelivered, got.Outcome)
	require.NotNil(t, got.FinishedAt)
	cur, err := s.Document(ctx, doc.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateSentSuccess, cur.State)
	st, err := s.LastReportedState(ctx, doc.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateProcessedSuccess, st)
}

// A conflicting transition rolls back the attempt with it.
func TestRecordAttemptConflictRollsBack(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	doc, _ := deliveryFixture(t, s, ctx)
	_, err := s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 1, StatusCode: 200},
		Outcome: store.DeliveryDelivered, Changes: []store.Change{{DocumentID: doc.ID, From: document.StateProcessedRejected,
			To: document.StateSentRejected, Actor: "dispatcher"}}})
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	atts, err := s.DeliveryAttempts(ctx, "msg_1")
	require.NoError(t, err)
	require.Empty(t, atts)
	dv, err := s.Delivery(ctx, "msg_1")
	require.NoError(t, err)
	require.Equal(t, store.DeliveryPending, dv.Outcome)
}

// A chain of moves (the dispatcher's 2xx: processed_success → sent_success →
// finished_success) lands in one statement with one event per step, in
// order, together with the attempt; a lost compare-and-set writes none of it.
func TestRecordAttemptChain(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	doc, _ := deliveryFixture(t, s, ctx)
	_, res, err := s.ClaimDelivery(ctx, "msg_1", time.Minute, slotOf("acme", 4))
	require.NoError(t, err)
	require.Equal(t, store.Claimed, res)
	chain := []store.Change{
		{DocumentID: doc.ID, From: document.StateProcessedSuccess, To: document.StateSentSuccess, Actor: "dispatcher", Detail: "attempt 1"},
		{DocumentID: doc.ID, From: document.StateSentSuccess, To: document.StateFinishedSuccess, Actor: "dispatcher", Detail: "recorded"},
	}
	stale := slices.Clone(chain)
	stale[0].From, stale[0].To, stale[1].From = document.StateProcessedRejected, document.StateSentRejected, document.StateSentRejected
	stale[1].To = document.StateFinishedRejected
	_, err = s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 1, StatusCode: 200},
		Outcome: store.DeliveryDelivered, Changes: stale})
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	atts, err := s.DeliveryAttempts(ctx, "msg_1")
	require.NoError(t, err)
	require.Empty(t, atts, "a lost compare-and-set records no attempt")

	got, err := s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 1, StatusCode: 200,
		Latency: 3 * time.Millisecond, BodyPrefix: "ok"}, Outcome: store.DeliveryDelivered, Changes: chain})
	require.NoError(t, err)
	require.Equal(t, []any{store.DeliveryDelivered, (*time.Time)(nil)}, []any{got.Outcome, got.LeasedUntil})
	evs, err := s.Events(ctx, doc.ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(evs), 2)
	cur, err := s.Document(ctx, doc.ID)
	require.NoError(t, err)
	require.Equal(t, document.StateFinishedSuccess, cur.State)
	last := evs[len(evs)-2:]
	require.Equal(t, []document.State{document.StateProcessedSuccess, document.StateSentSuccess}, []document.State{last[0].From, last[1].From})
	require.Equal(t, []document.State{document.StateSentSuccess, document.StateFinishedSuccess}, []document.State{last[0].To, last[1].To})
	require.Equal(t, []string{"attempt 1", "recorded"}, []string{last[0].Detail, last[1].Detail})
	atts, err = s.DeliveryAttempts(ctx, "msg_1")
	require.NoError(t, err)
	require.Len(t, atts, 1)
	require.Equal(t, 200, atts[0].StatusCode)
	require.Equal(t, "ok", atts[0].BodyPrefix)

	// A chain that skips a step is refused before anything is written.
	_, err = s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 2, StatusCode: 200},
		Outcome: store.DeliveryDelivered, Changes: []store.Change{{DocumentID: doc.ID, From: document.StateFinishedSuccess,
			To: document.StateProcessedSuccess, Actor: "dispatcher"}}})
	require.Error(t, err)
}

// The first EnsureDeliveryWithDocument creates the delivery and returns the
// document with its client; a second one returns the existing row
// unchanged, with them too.
func TestEnsureDeliveryWithDocument(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	require.NoError(t, s.SetWebhookEnabled(ctx, "acme", true))
	d, job := newDoc("acme", "m-ewd", "pdf")
	created, _, err := s.CreateDocument(ctx, d, job)
	require.NoError(t, err)
	want := store.Delivery{ID: "msg_ewd", DocumentID: created.ID, ClientID: "acme", LogID: created.LogID,
		State: document.StateReceived, Status: document.StatusSuccess}
	dv, doc, client, loaded, err := s.EnsureDeliveryWithDocument(ctx, want, time.Minute)
	require.NoError(t, err)
	require.True(t, loaded)
	require.Equal(t, "msg_ewd", dv.ID)
	require.Equal(t, store.DeliveryPending, dv.Outcome)
	require.Equal(t, created.ID, doc.ID)
	require.Equal(t, created.LogID, doc.LogID)
	wantClient, err := s.Client(ctx, "acme")
	require.NoError(t, err)
	require.Equal(t, wantClient, client)

	other := want
	other.State = document.StateDLQ
	again, doc2, client2, loaded, err := s.EnsureDeliveryWithDocument(ctx, other, time.Minute)
	require.NoError(t, err)
	require.True(t, loaded, "an existing delivery comes back with its document in the same statement")
	require.Equal(t, dv, again)
	require.Equal(t, doc, doc2)
	require.Equal(t, wantClient, client2)
}

// slotOf is a fresh lease request on one of client's per slots.
func slotOf(client string, per int) store.WebhookSlot {
	return store.WebhookSlot{ClientID: client, Holder: uuid.NewString(), Per: per, Lease: time.Minute}
}

// leasedSlots lists the holders of client's slots whose lease has not
// ended, by slot.
func leasedSlots(t *testing.T, s *store.Store, client string) map[int]string {
	t.Helper()
	return storetest.QueryMap[int, string](t, s.Pool(),
		`SELECT slot, holder FROM webhook_slots WHERE client_id = $1 AND leased_until > now()`, client)
}

// ClaimDelivery leases a slot only with the claim: a busy client's
// delivery is neither claimed nor counted, a taken delivery leases no slot,
// and a slot whose lease ended is taken over.
func TestClaimDeliveryTakesSlot(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	doc, _ := deliveryFixture(t, s, ctx)
	_, err := s.EnsureDelivery(ctx, store.Delivery{ID: "msg_2", DocumentID: doc.ID, ClientID: "acme", LogID: doc.LogID,
		State: document.StateProcessedSuccess, Status: document.StatusSuccess}, time.Minute)
	require.NoError(t, err)

	first := slotOf("acme", 1)
	dv, res, err := s.ClaimDelivery(ctx, "msg_1", time.Minute, first)
	require.NoError(t, err)
	require.Equal(t, store.Claimed, res)
	require.Equal(t, []any{"msg_1", 1}, []any{dv.ID, dv.Attempts})
	require.Equal(t, map[int]string{0: first.Holder}, leasedSlots(t, s, "acme"))

	_, res, err = s.ClaimDelivery(ctx, "msg_2", time.Minute, slotOf("acme", 1))
	require.NoError(t, err)
	require.Equal(t, store.ClaimBusy, res)
	busy, err := s.Delivery(ctx, "msg_2")
	require.NoError(t, err)
	require.Equal(t, []any{0, (*time.Time)(nil)}, []any{busy.Attempts, busy.LeasedUntil}, "a busy client's delivery is not claimed")

	// Slots are free, but the delivery is leased: no slot is taken for it.
	_, res, err = s.ClaimDelivery(ctx, "msg_1", time.Minute, slotOf("acme", 3))
	require.NoError(t, err)
	require.Equal(t, store.ClaimTaken, res)
	_, res, err = s.ClaimDelivery(ctx, "msg_missing", time.Minute, slotOf("acme", 3))
	require.NoError(t, err)
	require.Equal(t, store.ClaimTaken, res)
	require.Equal(t, map[int]string{0: first.Holder}, leasedSlots(t, s, "acme"))

	// A holder killed mid-call: its slot comes back when the lease ends,
	// and its late release does not free the slot's new holder.
	_, err = s.Pool().Exec(ctx, `UPDATE webhook_slots SET leased_until = now() - interval '1 second' WHERE client_id = 'acme'`)
	require.NoError(t, err)
	second := slotOf("acme", 1)
	_, res, err = s.ClaimDelivery(ctx, "msg_2", time.Minute, second)
	require.NoError(t, err)
	require.Equal(t, store.Claimed, res)
	require.NoError(t, s.ReleaseWebhookSlot(ctx, first))
	require.Equal(t, map[int]string{0: second.Holder}, leasedSlots(t, s, "acme"))
	require.NoError(t, s.ReleaseWebhookSlot(ctx, second))
	require.Empty(t, leasedSlots(t, s, "acme"))
}

// The statement that records an attempt releases the claim's slot: a
// retry (no document change), and a 2xx's chain only when its
// compare-and-set matched; a lost one leaves the slot to the caller.
func TestRecordAttemptReleasesSlot(t *testing.T) {
	t.Parallel()
	s, ctx := setup(t)
	doc, _ := deliveryFixture(t, s, ctx)
	claim := func() store.WebhookSlot {
		t.Helper()
		slot := slotOf("acme", 2)
		_, res, err := s.ClaimDelivery(ctx, "msg_1", time.Minute, slot)
		require.NoError(t, err)
		require.Equal(t, store.Claimed, res)
		require.Equal(t, map[int]string{0: slot.Holder}, leasedSlots(t, s, "acme"), "the first free slot")
		return slot
	}

	slot := claim()
	_, err := s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 1, StatusCode: 500},
		Outcome: store.DeliveryPending, CountFailure: true, NextAttempt: time.Now(), Slot: &slot})
	require.NoError(t, err)
	require.Empty(t, leasedSlots(t, s, "acme"), "released with the retry's record")

	slot = claim()
	chain := []store.Change{
		{DocumentID: doc.ID, From: document.StateProcessedSuccess, To: document.StateSentSuccess, Actor: "dispatcher"},
		{DocumentID: doc.ID, From: document.StateSentSuccess, To: document.StateFinishedSuccess, Actor: "dispatcher"},
	}
	stale := []store.Change{{DocumentID: doc.ID, From: document.StateProcessedRejected, To: document.StateSentRejected, Actor: "dispatcher"}}
	_, err = s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 2, StatusCode: 200},
		Outcome: store.DeliveryDelivered, Changes: stale, Slot: &slot})
	require.Equal(t, document.ECONFLICT, document.ErrorKind(err))
	require.Equal(t, map[int]string{0: slot.Holder}, leasedSlots(t, s, "acme"), "a lost compare-and-set keeps the slot")
	_, err = s.RecordAttempt(ctx, store.AttemptResult{Attempt: store.DeliveryAttempt{DeliveryID: "msg_1", N: 2, StatusCode: 200},
		Outcome: store.DeliveryDelivered, Changes: chain, Slot: &slot})
	require.NoError(t, err)
	require.Empty(t, leasedSlots(t, s, "acme"), "released with the 2xx's record")
}
