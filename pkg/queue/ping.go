package queue

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Ping is a readiness check of a NATS connection: ready while connected
// (a reconnecting connection buffers, but a readiness probe should say so).
func Ping(nc *nats.Conn) func(context.Context) error {
	return func(context.Context) error {
		if !nc.IsConnected() {
			return fmt.Errorf("nats: %s", nc.Status())
		}
		return nil
	}
}
