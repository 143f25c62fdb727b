package document_test

import (
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/stretchr/testify/require"
)

func TestParseReview(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]document.Review{"": "off", "off": "off", "hold": "hold"} {
		got, err := document.ParseReview(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := document.ParseReview("HOLD")
	require.Equal(t, document.EINVALID, document.ErrorKind(err))
	require.Equal(t, 4*time.Hour, document.Client{}.ReviewWait(), "issue 27: default review_timeout 4 h")
	require.Equal(t, time.Minute, document.Client{ReviewTimeout: time.Minute}.ReviewWait())
	require.False(t, document.Client{}.Holds())
	require.True(t, document.Client{Review: document.ReviewHold}.Holds())
}

// Issue 27: the reasons a person can fix are held; a document that is not
// an order (or not one the template reads) is not.
func TestFixableReasons(t *testing.T) {
	t.Parallel()
	want := map[document.Reason]bool{
		document.ReasonCannotParseItems: true, document.ReasonDocumentIDMissing: true,
		document.ReasonVATIDMissing: true, document.ReasonCannotParseDeliveryAddress: true,
	}
	for _, r := range document.Reasons {
		require.Equal(t, want[r], r.Fixable(), string(r))
	}
}
