package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	backoff := func(n uint64) time.Duration { return time.Duration(n) * time.Second }
	first := Delivery{NumDelivered: 1, MaxDeliver: 3}
	last := Delivery{NumDelivered: 3, MaxDeliver: 3}
	unlimited := Delivery{NumDelivered: 99, MaxDeliver: -1}
	cases := map[string]struct {
		err         error
		d           Delivery
		hardStopped bool
		want        action
		delay       time.Duration
	}{
		"Success":                    {nil, first, false, actAck, 0},
		"SuccessOnLastAttempt":       {nil, last, false, actAck, 0},
		"SuccessAfterHardStop":       {nil, first, true, actAck, 0},
		"Permanent":                  {Permanent(boom), first, false, actTerm, 0},
		"PermanentWrapped":           {fmt.Errorf("extract: %w", Permanent(boom)), first, false, actTerm, 0},
		"PermanentDuringHardStop":    {Permanent(boom), first, true, actTerm, 0},
		"ErrorOnLastAttempt":         {boom, last, false, actTerm, 0},
		"RetryAfterOnLastAttempt":    {RetryAfter(time.Hour, boom), last, false, actTerm, 0},
		"HardStopOnLastAttempt":      {context.Canceled, last, true, actTerm, 0},
		"HardStop":                   {context.Canceled, first, true, actNak, 0},
		"RetryAfter":                 {RetryAfter(time.Minute, boom), first, false, actNakDelay, time.Minute},
		"RetryAfterWrapped":          {fmt.Errorf("map: %w", RetryAfter(5*time.Minute, boom)), first, false, actNakDelay, 5 * time.Minute},
		"RetryAfterNilErr":           {RetryAfter(time.Second, nil), first, false, actNakDelay, time.Second},
		"PlainError":                 {boom, first, false, actNakDelay, time.Second},
		"PlainErrorSecondAttempt":    {boom, Delivery{NumDelivered: 2, MaxDeliver: 3}, false, actNakDelay, 2 * time.Second},
		"PlainErrorUnlimitedDeliver": {boom, unlimited, false, actNakDelay, 99 * time.Second},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := decide(c.err, c.d, c.hardStopped, backoff)
			require.Equal(t, c.want.String(), s.action.String())
			require.Equal(t, c.delay, s.delay)
			if c.err != nil {
				require.ErrorIs(t, s.err, boomOr(c.err))
			}
		})
	}
	require.Nil(t, Permanent(nil))
	require.False(t, IsPermanent(boom))
}

// boomOr returns the innermost error of err, which decide must keep.
func boomOr(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func TestDefaultBackoff(t *testing.T) {
	t.Parallel()
	require.Equal(t, time.Second, DefaultBackoff(0))
	require.Equal(t, time.Second, DefaultBackoff(1))
	require.Equal(t, 2*time.Second, DefaultBackoff(2))
	require.Equal(t, 256*time.Second, DefaultBackoff(9))
	require.Equal(t, 5*time.Minute, DefaultBackoff(10))
	require.Equal(t, 5*time.Minute, DefaultBackoff(1000), "no overflow")
}
