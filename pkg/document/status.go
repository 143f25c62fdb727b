package document

import "strings"

// Status is the webhook's ProcessorResultStatus (wire form lowercase).
type Status string

// The statuses of the interface's Events part.
const (
	StatusIgnored          Status = "ignored"
	StatusRejected         Status = "rejected"
	StatusFailed           Status = "failed"
	StatusDeferredForRetry Status = "deferred_for_retry"
	StatusSuccess          Status = "success"
)

// Reason is a ProcessorResultStatusReason. Its value is the upper-case name of
// the interface; WireValue gives what goes on the wire, because two names
// (NOT_AN_INVOICE and NOT_AN_ORDER) share one wire value.
type Reason string

// The reasons of the interface.
const (
	ReasonCannotParseDeliveryAddress Reason = "CANNOT_PARSE_DELIVERY_ADDRESS"
	ReasonCannotParseItems           Reason = "CANNOT_PARSE_ITEMS"
	ReasonDocumentIDMissing          Reason = "DOCUMENT_ID_MISSING"
	ReasonMappingNotResolved         Reason = "MAPPING_NOT_RESOLVED"
	ReasonNotAnInvoice               Reason = "NOT_AN_INVOICE"
	ReasonNotAnOrder                 Reason = "NOT_AN_ORDER"
	ReasonNotAnOrderResponse         Reason = "NOT_AN_ORDER_RESPONSE"
	ReasonVATIDMissing               Reason = "VAT_ID_MISSING"
	ReasonUnknownFormat              Reason = "UNKNOWN_FORMAT"
)

// Reasons lists every reason in the order of the interface.
var Reasons = []Reason{
	ReasonCannotParseDeliveryAddress, ReasonCannotParseItems, ReasonDocumentIDMissing,
	ReasonMappingNotResolved, ReasonNotAnInvoice, ReasonNotAnOrder,
	ReasonNotAnOrderResponse, ReasonVATIDMissing, ReasonUnknownFormat,
}

// WireValue is the reason as the webhook carries it. NOT_AN_INVOICE is sent as
// "not_an_order", as the interface documents (kept for compatibility).
func (r Reason) WireValue() string {
	if r == ReasonNotAnInvoice {
		return "not_an_order"
	}
	return strings.ToLower(string(r))
}

// ParseReason accepts a reason's name or its wire value (any case). The wire
// value "not_an_order" parses as NOT_AN_ORDER. It returns EINVALID otherwise.
func ParseReason(s string) (Reason, error) {
	u := Reason(strings.ToUpper(strings.TrimSpace(s)))
	for _, r := range Reasons {
		if r == u {
			return r, nil
		}
	}
	return "", Errorf(EINVALID, "unknown status reason %q", s)
}

// StatusFor is the webhook status that goes with a state, per DESIGN.md
// ("Status per state"). ok is false for states that are not delivered.
func StatusFor(s State) (st Status, ok bool) {
	switch s {
	case StateProcessedSuccess, StateSentSuccess, StateFinishedSuccess:
		return StatusSuccess, true
	case StateProcessedRejected, StateSentRejected, StateFinishedRejected:
		return StatusRejected, true
	case StateProcessedIgnored, StateFinishedIgnored:
		return StatusIgnored, true
	case StateDeferredForRetry:
		return StatusDeferredForRetry, true
	case StateDLQ, StateFinishedWithFailure:
		return StatusFailed, true
	}
	return "", false
}

// ResultMode is the optional upload field result_mode.
type ResultMode string

// ResultModeNoItems: item lines are neither parsed nor required.
const ResultModeNoItems ResultMode = "no_items"

// ParseResultMode accepts "" (no mode) and "no_items"; anything else is
// EINVALID.
func ParseResultMode(s string) (ResultMode, error) {
	switch s {
	case "":
		return "", nil
	case string(ResultModeNoItems):
		return ResultModeNoItems, nil
	}
	return "", Errorf(EINVALID, "unknown result_mode %q (allowed: no_items)", s)
}
