package opentrans

import "strconv"

// orderChangeInfo is the content of ORDERCHANGE_INFO in schema order:
// ORDER_ID (the order being changed, order.Order.ID), ORDERCHANGE_DATE (the
// change's date), ORDERCHANGE_SEQUENCE_ID (WriteOptions.ChangeSequence,
// mandatory in openTRANS and absent from the canonical model and from
// Order-X, whose change message carries no sequence: without one a change
// is written as the first), DELIVERY_DATE, LANGUAGE, PARTIES,
// ORDER_PARTIES_REFERENCE, CURRENCY. Items are ORDER_ITEMs, as the schema
// defines ORDERCHANGE_ITEM_LIST.
func orderChangeInfo(id, date string, sequence int, delivery, language, parties *node, r refs, currency *node) []*node {
	return []*node{leaf("ORDER_ID", id), leaf("ORDERCHANGE_DATE", date),
		leaf("ORDERCHANGE_SEQUENCE_ID", strconv.Itoa(max(sequence, 1))),
		delivery, language, parties,
		el("ORDER_PARTIES_REFERENCE", r.buyer, r.supplier, r.invoiceRecipient, el("SHIPMENT_PARTIES_REFERENCE", r.delivery)),
		currency}
}
