package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// AcquireWebhookSlot leases one of the client's per webhook slots for lease
// to holder (a random id of this acquisition), across all dispatchers: ok is
// false when every slot is leased. Two dispatchers racing for the last free
// slot never both get it (the loser may be told "busy" although another slot
// just came free; it asks again later).
func (s *Store) AcquireWebhookSlot(ctx context.Context, clientID, holder string, per int, lease time.Duration) (slot int, ok bool, err error) {
	const q = `WITH free AS (
		SELECT n FROM generate_series(0, $3::int - 1) n
		WHERE NOT EXISTS (SELECT 1 FROM webhook_slots w WHERE w.client_id = $1 AND w.slot = n AND w.leased_until > now())
		ORDER BY n LIMIT 1)
	INSERT INTO webhook_slots AS w (client_id, slot, holder, leased_until)
	SELECT $1, n, $2, now() + make_interval(secs => $4) FROM free
	ON CONFLICT (client_id, slot) DO UPDATE SET holder = EXCLUDED.holder, leased_until = EXCLUDED.leased_until
		WHERE w.leased_until <= now()
	RETURNING w.slot`
	err = s.db.QueryRow(ctx, q, clientID, holder, per, lease.Seconds()).Scan(&slot)
	if err == pgx.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, translate(err, "acquire webhook slot")
	}
	return slot, true, nil
}

// ReleaseWebhookSlot frees the slot if holder still has it.
func (s *Store) ReleaseWebhookSlot(ctx context.Context, clientID string, slot int, holder string) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM webhook_slots WHERE client_id = $1 AND slot = $2 AND holder = $3`,
		clientID, slot, holder); err != nil {
		return translate(err, "release webhook slot")
	}
	return nil
}
