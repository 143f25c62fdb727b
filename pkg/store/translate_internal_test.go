package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL restarting under a running service (the chaos harness) must
// read as unavailable (ingest: 503, retry), not as an internal error.
func TestTranslateOutages(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for name, err := range map[string]error{
		"connection reset":   fmt.Errorf("query: %w", reset),
		"connection refused": &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		"unexpected EOF":     io.ErrUnexpectedEOF,
		"closed":             fmt.Errorf("x: %w", net.ErrClosed),
		"admin shutdown":     &pgconn.PgError{Code: "57P01"},
		"crash shutdown":     &pgconn.PgError{Code: "57P02"},
		"cannot connect now": &pgconn.PgError{Code: "57P03"},
		"connection failure": &pgconn.PgError{Code: "08006"},
		"deadline":           context.DeadlineExceeded,
	} {
		if got := document.ErrorKind(translate(err, "op")); got != document.EUNAVAILABLE {
			t.Errorf("%s: kind %q, want EUNAVAILABLE", name, got)
		}
	}
	for name, c := range map[string]struct {
		err  error
		kind string
	}{
		"no rows":      {pgx.ErrNoRows, document.ENOTFOUND},
		"unique":       {&pgconn.PgError{Code: "23505"}, document.ECONFLICT},
		"syntax error": {&pgconn.PgError{Code: "42601"}, ""},
		"other":        {errors.New("boom"), ""},
	} {
		got := document.ErrorKind(translate(c.err, "op"))
		if c.kind != "" && got != c.kind || c.kind == "" && got == document.EUNAVAILABLE {
			t.Errorf("%s: kind %q, want %q", name, got, c.kind)
		}
	}
}
