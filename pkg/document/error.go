package document

import (
	"errors"
	"fmt"
)

// Application error codes. They classify an error for the boundary (HTTP
// status, worker settle decision); the Error's Code field carries the stable
// snake_case code clients see.
const (
	EINVALID         = "invalid"         // 422
	EUNAUTHENTICATED = "unauthenticated" // 401
	ENOTFOUND        = "not_found"       // 404
	ECONFLICT        = "conflict"        // 409 / CAS lost
	ETOOLARGE        = "too_large"       // 413
	EUNSUPPORTED     = "unsupported"     // 415
	EBADREQUEST      = "bad_request"     // 400
	EUNAVAILABLE     = "unavailable"     // 503
	EINTERNAL        = "internal"        // 500
)

// Error is the application error: Kind is one of the E* classes, Code the
// stable machine code clients see (defaults to Kind), Message a user-safe
// sentence and Details optional field-level details.
type Error struct {
	Kind    string
	Code    string
	Message string
	Details map[string]string
	Err     error
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind with a formatted message; the code is the
// kind itself.
func Errorf(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: kind, Message: fmt.Sprintf(format, args...)}
}

// CodedErrorf returns an *Error with an explicit client-facing code, such as
// "template_not_found" or "duplicate_message_id".
func CodedErrorf(kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorKind unwraps err to its *Error and returns its kind; nil gives "" and
// any other error EINTERNAL.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return EINTERNAL
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
