package queue

import (
	"errors"
	"fmt"
	"time"
)

// PermanentError marks a failure that retrying cannot fix (unreadable PDF,
// unknown document, bad payload). Consume terminates the message.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so that Consume terminates the message instead of
// retrying it. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err's chain holds a PermanentError.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// RetryAfterError asks for a redelivery after Delay (a deferral with an
// explicit schedule, e.g. a mapping that ops have not loaded yet).
type RetryAfterError struct {
	Delay time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("retry after %s: %v", e.Delay, e.Err)
}
func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter wraps err so that Consume naks the message with delay d
// instead of the consumer's default backoff. A nil err still means "retry":
// the handler chose to snooze.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		err = errors.New("snoozed")
	}
	return &RetryAfterError{Delay: d, Err: err}
}
