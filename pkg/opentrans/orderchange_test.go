package opentrans_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/docintake/docintake/pkg/order"
	"github.com/stretchr/testify/require"
)

// An order's revision is written as an ORDERCHANGE with the sequence number
// the caller counts (issue 28); without one it is the first change.
func TestWrite_orderChangeSequence(t *testing.T) {
	for _, c := range []struct {
		seq  int
		want string
	}{{0, "1"}, {1, "1"}, {3, "3"}} {
		o := fullOrder()
		o.Type = order.TypeOrderChange
		opts := testOpts
		opts.ChangeSequence = c.seq
		b, err := opentrans.Marshal(o, opts)
		require.NoError(t, err)
		opentranstest.Validate(t, b)
		require.Equal(t, []string{c.want}, texts(t, b, "ORDERCHANGE/ORDERCHANGE_HEADER/ORDERCHANGE_INFO/ORDERCHANGE_SEQUENCE_ID"))
		require.Equal(t, []string{o.ID}, texts(t, b, "ORDERCHANGE_INFO/ORDER_ID"))
	}
}
