package document

import (
	"regexp"
	"time"
)

// Client is a tenant: an ERP integration that uploads documents and receives
// results on its webhook.
type Client struct {
	ID             string
	Name           string
	WebhookURL     string
	WebhookToken   string // sent as Authorization: Bearer on webhook calls; never logged
	SigningSecret  string // Standard Webhooks secret (base64, optional "whsec_" prefix); never logged
	WebhookEnabled bool
	// UnknownParty is what an upload whose party_id no template claims
	// gets: "" or UnknownPartyReject is 400 template_not_found,
	// UnknownPartyGeneric the built-in generic reader.
	UnknownParty UnknownParty
	// Review: ReviewHold keeps fixable rejections for an operator (issue
	// 27) instead of delivering them; "" or ReviewOff delivers them.
	Review Review
	// ReviewTimeout is how long a held rejection waits for an operator
	// before it is delivered as it is (0: DefaultReviewTimeout).
	ReviewTimeout time.Duration
	// RouteUnaddressed: an HTTP upload naming neither template nor
	// party_id is routed (issue 29) instead of refused with 422.
	RouteUnaddressed bool
}

// UnknownParty is a client's answer to a party_id without a template.
type UnknownParty string

// UnknownParty values (clients.unknown_party).
const (
	UnknownPartyReject  UnknownParty = "reject"
	UnknownPartyGeneric UnknownParty = "generic"
)

// ParseUnknownParty accepts "" (the default, reject), "reject" and
// "generic"; anything else is EINVALID.
func ParseUnknownParty(s string) (UnknownParty, error) {
	switch UnknownParty(s) {
	case "", UnknownPartyReject:
		return UnknownPartyReject, nil
	case UnknownPartyGeneric:
		return UnknownPartyGeneric, nil
	}
	return "", Errorf(EINVALID, "unknown_party must be reject or generic, not %q", s)
}

var clientIDPattern = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// ValidClientID reports whether id has the form [a-z0-9_-]{1,64}.
func ValidClientID(id string) bool { return clientIDPattern.MatchString(id) }

// Document is one uploaded file and where it stands.
type Document struct {
	ID             string // database id (UUID)
	LogID          string // client-facing id returned at upload
	ClientID       string
	MessageID      string
	FileSHA256     []byte
	FileSize       int64
	Filename       string
	Subject        string
	Template       string // resolved template name (also when the upload gave a party_id)
	PartyID        string // "" when the upload named a template
	ResultMode     ResultMode
	DocumentDate   *time.Time // date only; nil until extracted
	SourcePath     string     // URI of the archived PDF ("" = none)
	ResultPath     string     // URI of the openTRANS XML ("" = none)
	ResultJSONPath string     // URI of the canonical JSON ("" = none)
	State          State
	StatusReason   Reason // "" = none
	Attempts       int
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Object store keys of the objects above, which services read and write
	// by; the *Path URIs are only shown (never parsed back into keys).
	SourceKey     string // the archived PDF; every stored document has one
	ResultKey     string // the openTRANS XML ("" = none)
	ResultJSONKey string // the canonical JSON ("" = none)
}

// Event is one row of a document's append-only history.
type Event struct {
	ID     int64
	From   State // "" for the creating event
	To     State
	Reason Reason
	Actor  string
	Detail string
	At     time.Time
}
