package opentrans

// orderChangeSequence is ORDERCHANGE_SEQUENCE_ID, mandatory in openTRANS
// and absent from the canonical model and from Order-X (whose change
// message carries no sequence): every change is written as the first.
const orderChangeSequence = "1"

// orderChangeInfo is the content of ORDERCHANGE_INFO in schema order:
// ORDER_ID (the order being changed, order.Order.ID), ORDERCHANGE_DATE (the
// change's date), ORDERCHANGE_SEQUENCE_ID, DELIVERY_DATE, LANGUAGE,
// PARTIES, ORDER_PARTIES_REFERENCE, CURRENCY. Items are ORDER_ITEMs, as the
// schema defines ORDERCHANGE_ITEM_LIST.
func orderChangeInfo(id, date string, delivery, language, parties *node, r refs, currency *node) []*node {
	return []*node{leaf("ORDER_ID", id), leaf("ORDERCHANGE_DATE", date), leaf("ORDERCHANGE_SEQUENCE_ID", orderChangeSequence),
		delivery, language, parties,
		el("ORDER_PARTIES_REFERENCE", r.buyer, r.supplier, r.invoiceRecipient, el("SHIPMENT_PARTIES_REFERENCE", r.delivery)),
		currency}
}
