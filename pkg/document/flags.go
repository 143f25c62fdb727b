package document

// FlagPolicy is what a client's flagged orders get (clients.flags, issue
// 28): an order read exactly whose price is outside the client's price list
// or whose delivery date is before the order date or already past.
type FlagPolicy string

// FlagPolicy values.
const (
	// FlagsDeliver delivers a flagged order as success with the flags in
	// the openTRANS line's REMARKS and the result JSON's flags.
	FlagsDeliver FlagPolicy = "deliver"
	// FlagsReview holds a flagged order for review (as a rejection a
	// person can fix, issue 27) until an operator approves or releases it
	// or the client's review timeout passes.
	FlagsReview FlagPolicy = "review"
)

// ParseFlagPolicy accepts "" (the default, deliver), "deliver" and
// "review"; anything else is EINVALID.
func ParseFlagPolicy(s string) (FlagPolicy, error) {
	switch FlagPolicy(s) {
	case "", FlagsDeliver:
		return FlagsDeliver, nil
	case FlagsReview:
		return FlagsReview, nil
	}
	return "", Errorf(EINVALID, "flags must be deliver or review, not %q", s)
}
