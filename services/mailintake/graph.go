package mailintake

import (
	"context"
	"errors"
)

// graphSource is a mail folder of a Microsoft 365 mailbox, read through
// Microsoft Graph.
type graphSource struct{ p *poller }

func newGraphSource(p *poller) *graphSource { return &graphSource{p: p} }

func (g *graphSource) open(context.Context) (session, error) {
	return nil, errors.New("graph: not implemented yet")
}
