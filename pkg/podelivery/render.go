package podelivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/store"
)

// maxChanges bounds the changes a revision's note lists.
const maxChanges = 50

// RemarkPrefix starts the ORDER_INFO remark that marks an ORDER as a
// revision (clients.revisions order): "docintake revision 1 of order …".
const RemarkPrefix = "docintake "

// Render returns the openTRANS of o delivered as decided by d and the
// revision's note for the history. For a revision (or a revision delivered
// again) it is an ORDERCHANGE with the sequence number and the note as a
// remark, or, where the client's revisions setting is order, an ORDER whose
// last ORDER_INFO remark is RemarkPrefix and the note. Otherwise xml is nil
// and note "": the caller's ORDER stands. o is not modified.
func Render(ctx context.Context, st *store.Store, o *order.Order, d Decision, now time.Time) (xml []byte, note string, err error) {
	if d.Next.Revision == 0 {
		return nil, "", nil
	}
	if note, err = d.Note(); err != nil {
		return nil, "", err
	}
	format, err := st.RevisionFormat(ctx, d.Next.ClientID)
	if err != nil {
		return nil, "", fmt.Errorf("revisions of client %s: %w", d.Next.ClientID, err)
	}
	c := *o
	opts := opentrans.WriteOptions{GenerationTime: now}
	remark := note
	if format == document.RevisionsOrder {
		remark = RemarkPrefix + note
	} else {
		c.Type, opts.ChangeSequence = order.TypeOrderChange, d.Next.Revision
	}
	c.Remarks = append(append([]string(nil), o.Remarks...), remark)
	if xml, err = opentrans.Marshal(&c, opts); err != nil {
		return nil, "", fmt.Errorf("render revision %d of order %s as %s: %w", d.Next.Revision, d.Next.OrderID, format, err)
	}
	return xml, note, nil
}

// Note is the history's (and the openTRANS remark's) account of a
// revision: which delivery it changes and what, line by line.
func (d Decision) Note() (string, error) {
	if d.Kind == Again {
		return fmt.Sprintf("revision %d of order %s (buyer %s), delivered again", d.Next.Revision, d.Next.OrderID,
			d.Next.Buyer), nil
	}
	// Both sides canonical: "10.00" and "10" are no change.
	var prev, cur order.Order
	if err := json.Unmarshal(d.Prev.Canonical, &prev); err != nil {
		return "", fmt.Errorf("read order %s's earlier delivery %s: %w", d.Next.OrderID, d.Prev.LogID, err)
	}
	if err := json.Unmarshal(d.Next.Canonical, &cur); err != nil {
		return "", fmt.Errorf("read order %s: %w", d.Next.OrderID, err)
	}
	what := "no change in the compared values"
	changes := Diff(&prev, &cur)
	if len(changes) > maxChanges { // a new order under an old number: the count says enough
		changes = append(changes[:maxChanges], fmt.Sprintf("and %d more changes", len(changes)-maxChanges))
	}
	if len(changes) > 0 {
		what = strings.Join(changes, "; ")
	}
	return fmt.Sprintf("revision %d of order %s (buyer %s), changes %s: %s",
		d.Next.Revision, d.Next.OrderID, d.Next.Buyer, d.Prev.LogID, what), nil
}
