package document

import "time"

// Review is a client's answer to a rejection a person could fix
// (clients.review): deliver it at once, or hold it for an operator.
type Review string

// Review values.
const (
	ReviewOff  Review = "off"
	ReviewHold Review = "hold"
)

// DefaultReviewTimeout is how long a held rejection waits for an operator
// when the client sets no review_timeout: after it the rejection is
// delivered as it is, so a client never waits forever.
const DefaultReviewTimeout = 4 * time.Hour

// ParseReview accepts "" (the default, off), "off" and "hold"; anything
// else is EINVALID.
func ParseReview(s string) (Review, error) {
	switch Review(s) {
	case "", ReviewOff:
		return ReviewOff, nil
	case ReviewHold:
		return ReviewHold, nil
	}
	return "", Errorf(EINVALID, "review must be off or hold, not %q", s)
}

// Holds reports whether the client holds fixable rejections for review.
func (c Client) Holds() bool { return c.Review == ReviewHold }

// ReviewWait is the client's review timeout (DefaultReviewTimeout when
// unset).
func (c Client) ReviewWait() time.Duration {
	if c.ReviewTimeout <= 0 {
		return DefaultReviewTimeout
	}
	return c.ReviewTimeout
}

// Fixable reports whether a rejection for r is one a person can fix by
// correcting the order as read: a missing or unreadable value (order id,
// items, a quantity, an amount that does not close, a VAT id, the delivery
// address). not_an_order(_response) and unknown_format say the document is
// not one the template reads: there is no order to correct.
func (r Reason) Fixable() bool {
	switch r {
	case ReasonCannotParseItems, ReasonDocumentIDMissing, ReasonVATIDMissing, ReasonCannotParseDeliveryAddress:
		return true
	}
	return false
}
