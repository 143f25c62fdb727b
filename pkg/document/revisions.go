package document

// RevisionFormat is how a client's revisions of a delivered PO are
// delivered (clients.revisions, issue 28): a PO delivered before and sent
// again with other content under the same number.
type RevisionFormat string

// RevisionFormat values.
const (
	// RevisionsOrderChange delivers a revision as an openTRANS ORDERCHANGE
	// with its sequence number (the default).
	RevisionsOrderChange RevisionFormat = "orderchange"
	// RevisionsOrder delivers a revision as an openTRANS ORDER whose
	// ORDER_INFO remarks say it is one (sequence number, earlier log_id,
	// what changed), for ERPs that take no ORDERCHANGE.
	RevisionsOrder RevisionFormat = "order"
)

// ParseRevisionFormat accepts "" (the default, orderchange), "orderchange"
// and "order"; anything else is EINVALID.
func ParseRevisionFormat(s string) (RevisionFormat, error) {
	switch RevisionFormat(s) {
	case "", RevisionsOrderChange:
		return RevisionsOrderChange, nil
	case RevisionsOrder:
		return RevisionsOrder, nil
	}
	return "", Errorf(EINVALID, "revisions must be orderchange or order, not %q", s)
}
