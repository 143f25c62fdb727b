package store

import (
	"context"
	"fmt"
	"time"
)

// WebhookSlot is a lease on one of a client's Per webhook slots, which bound
// its calls in flight across all dispatchers
// (INTAKE_WEBHOOK_CLIENT_CONCURRENCY). ClaimDelivery takes it with the
// claim; the statement that records the attempt (AttemptResult.Slot) or
// ReleaseWebhookSlot gives it back, and a dispatcher killed mid-call holds
// it until Lease ends.
type WebhookSlot struct {
	ClientID string
	// Holder is a random id of this lease: a late release never frees a
	// slot someone else took over after the lease ended.
	Holder string
	Per    int
	Lease  time.Duration
}

// slotArgs are the parameters naming s in a release: its client and
// holder, which is unique to the lease, so the release needs no slot
// number (a claim whose answer was lost can be undone). nil releases
// nothing.
func slotArgs(s *WebhookSlot) []any {
	if s == nil {
		return []any{nil, nil}
	}
	return []any{s.ClientID, s.Holder}
}

// releaseSlotSQL is the statement that frees the slot named by slotArgs
// bound at $n and $n+1; the attempt records run it as a CTE, with a
// condition appended.
func releaseSlotSQL(n int) string {
	return fmt.Sprintf(`DELETE FROM webhook_slots WHERE client_id = $%d AND holder = $%d`, n, n+1)
}

// ReleaseWebhookSlot frees the slot if its holder still has it. The paths
// where no attempt is recorded after a claim use it.
func (s *Store) ReleaseWebhookSlot(ctx context.Context, slot WebhookSlot) error {
	if _, err := s.db.Exec(ctx, releaseSlotSQL(1), slotArgs(&slot)...); err != nil {
		return translate(err, "release webhook slot")
	}
	return nil
}
