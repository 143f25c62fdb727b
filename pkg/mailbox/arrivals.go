package mailbox

import (
	"context"
	"time"

	"github.com/emersion/go-imap/v2"
)

// Arrivals reads the INTERNALDATE (arrival at the server) of the selected
// folder's mails, in one FETCH.
func (c *conn) Arrivals(_ context.Context, uids []uint32) (map[uint32]time.Time, error) {
	var set imap.UIDSet
	for _, u := range uids {
		set.AddNum(imap.UID(u))
	}
	msgs, err := c.c.Fetch(set, &imap.FetchOptions{UID: true, InternalDate: true}).Collect()
	if err != nil {
		return nil, wrapIMAP("fetch arrival", err)
	}
	out := make(map[uint32]time.Time, len(msgs))
	for _, m := range msgs {
		out[uint32(m.UID)] = m.InternalDate
	}
	return out, nil
}
