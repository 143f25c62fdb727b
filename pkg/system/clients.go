package system

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"gopkg.in/yaml.v3"
)

// ClientSpec is one entry of INTAKE_CLIENTS_FILE.
type ClientSpec struct {
	ID            string   `yaml:"id"`
	Name          string   `yaml:"name"`
	TokenSHA256   []string `yaml:"token_sha256"`
	WebhookURL    string   `yaml:"webhook_url"`
	WebhookToken  string   `yaml:"webhook_token"`
	SigningSecret string   `yaml:"signing_secret"`
	// UnknownParty: reject (default) or generic (document.UnknownParty).
	UnknownParty string `yaml:"unknown_party"`
	// RouteUnaddressed: an HTTP upload naming neither template nor
	// party_id is routed (issue 29) instead of refused with 422.
	RouteUnaddressed bool `yaml:"route_unaddressed"`
	// Review: off (default) or hold (document.Review): hold keeps
	// rejections a person can fix for an operator until ReviewTimeout.
	Review string `yaml:"review"`
	// ReviewTimeout is a Go duration ("4h", "30m"); "" is
	// document.DefaultReviewTimeout.
	ReviewTimeout string `yaml:"review_timeout"`
	// DuplicateWindowDays is how many days a delivered PO counts for
	// duplicates and revisions (issue 28); absent is
	// store.DefaultDuplicateWindowDays, 0 turns the check off.
	DuplicateWindowDays *int `yaml:"duplicate_window_days"`
	// Flags: deliver (default) or review (document.FlagPolicy): what an
	// order flagged for its price or delivery date gets (docs/orders.md).
	Flags string `yaml:"flags"`
	// Revisions: orderchange (default) or order (document.RevisionFormat):
	// how a revision of a delivered PO is delivered (docs/orders.md).
	Revisions string `yaml:"revisions"`
}

// reviewTimeout parses ReviewTimeout ("" is 0, the default).
func (c ClientSpec) reviewTimeout() (time.Duration, error) {
	if c.ReviewTimeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(c.ReviewTimeout)
	if err != nil || d < time.Second {
		return 0, fmt.Errorf("review_timeout %q must be a duration of at least 1s, such as 4h or 30m", c.ReviewTimeout)
	}
	return d, nil
}

type clientsFile struct {
	Clients []ClientSpec `yaml:"clients"`
}

// LoadClientsFile reads and validates a clients file. Errors name the file
// and the entry.
func LoadClientsFile(path string) ([]ClientSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("clients file: %w", err)
	}
	var f clientsFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true) // a misspelt key must not silently drop a token
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("clients file %s: %w", path, err)
	}
	seen := map[string]bool{}
	for i, c := range f.Clients {
		where := fmt.Sprintf("clients file %s: clients[%d]", path, i)
		if !document.ValidClientID(c.ID) {
			return nil, fmt.Errorf("%s: id %q must match [a-z0-9_-]{1,64}", where, c.ID)
		}
		if seen[c.ID] {
			return nil, fmt.Errorf("%s: id %q appears twice", where, c.ID)
		}
		seen[c.ID] = true
		if _, err := document.ParseUnknownParty(c.UnknownParty); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, c.ID, err)
		}
		if _, err := document.ParseReview(c.Review); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, c.ID, err)
		}
		if _, err := c.reviewTimeout(); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, c.ID, err)
		}
		if _, err := document.ParseFlagPolicy(c.Flags); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, c.ID, err)
		}
		if _, err := document.ParseRevisionFormat(c.Revisions); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", where, c.ID, err)
		}
		if w := c.DuplicateWindowDays; w != nil && *w < 0 {
			return nil, fmt.Errorf("%s (%s): duplicate_window_days must be 0 or more, not %d", where, c.ID, *w)
		}
		for _, h := range c.TokenSHA256 {
			if _, err := store.ParseTokenHash(h); err != nil {
				return nil, fmt.Errorf("%s (%s): %w", where, c.ID, err)
			}
		}
	}
	return f.Clients, nil
}

// ApplyClients upserts the clients and their token hashes.
func ApplyClients(ctx context.Context, st *store.Store, specs []ClientSpec) error {
	for _, c := range specs {
		hashes := make([][32]byte, 0, len(c.TokenSHA256))
		for _, h := range c.TokenSHA256 {
			sum, _ := store.ParseTokenHash(h) // validated by LoadClientsFile
			hashes = append(hashes, sum)
		}
		timeout, _ := c.reviewTimeout() // validated by LoadClientsFile
		err := st.UpsertClient(ctx, document.Client{ID: c.ID, Name: c.Name, WebhookURL: c.WebhookURL,
			WebhookToken: c.WebhookToken, SigningSecret: c.SigningSecret, WebhookEnabled: true,
			UnknownParty: document.UnknownParty(c.UnknownParty), Review: document.Review(c.Review), ReviewTimeout: timeout}, hashes...)
		if err != nil {
			return fmt.Errorf("apply client %s: %w", c.ID, err)
		}
		if err := st.SetRouteUnaddressed(ctx, c.ID, c.RouteUnaddressed); err != nil {
			return fmt.Errorf("apply client %s: %w", c.ID, err)
		}
		days := store.DefaultDuplicateWindowDays
		if c.DuplicateWindowDays != nil {
			days = *c.DuplicateWindowDays
		}
		if err := st.SetDuplicateWindow(ctx, c.ID, days); err != nil {
			return fmt.Errorf("apply client %s: %w", c.ID, err)
		}
		if err := st.SetFlagPolicy(ctx, c.ID, document.FlagPolicy(c.Flags)); err != nil {
			return fmt.Errorf("apply client %s: %w", c.ID, err)
		}
		if err := st.SetRevisionFormat(ctx, c.ID, document.RevisionFormat(c.Revisions)); err != nil {
			return fmt.Errorf("apply client %s: %w", c.ID, err)
		}
	}
	return nil
}
