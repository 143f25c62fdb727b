package intakectl

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
)

const clientsSetUsage = "usage: intakectl clients set ID [--review hold|off] [--review-timeout 4h] [--duplicate-window-days N] [--flags deliver|review] [--revisions orderchange|order] [--route-unaddressed on|off]"

// clientSettings are a client's settings beside its webhook: what
// `clients set` changes and `clients show` and `list` print.
type clientSettings struct {
	document.Client
	DuplicateWindowDays int
	Flags               document.FlagPolicy
	Revisions           document.RevisionFormat
}

func readClientSettings(ctx context.Context, st *store.Store, id string) (clientSettings, error) {
	c, err := st.Client(ctx, id)
	if err != nil {
		return clientSettings{}, err
	}
	days, err := st.DuplicateWindow(ctx, id)
	if err != nil {
		return clientSettings{}, err
	}
	flags, err := st.FlagPolicy(ctx, id)
	if err != nil {
		return clientSettings{}, err
	}
	revisions, err := st.RevisionFormat(ctx, id)
	return clientSettings{Client: c, DuplicateWindowDays: days, Flags: flags, Revisions: revisions}, err
}

// clientsSet holds the values of `clients set`; set names the flags given.
type clientsSet struct {
	review, flags, revisions, route *string
	timeout                         *time.Duration
	days                            *int
	set                             map[string]bool
}

// runClientsSet is `clients set ID`: changes only the settings given, in
// one transaction.
func runClientsSet(ctx context.Context, args []string, env Env) int {
	fs := newFlags("clients set", env)
	v := clientsSet{
		review:    fs.String("review", "", "hold: keep rejections a person can fix for review; off: deliver them at once"),
		timeout:   fs.Duration("review-timeout", 0, "how long a held rejection waits for an operator before it is delivered (at least 1s)"),
		days:      fs.Int("duplicate-window-days", 0, "days a delivered PO counts for duplicates and revisions; 0 off"),
		flags:     fs.String("flags", "", "deliver: flagged orders (price, delivery date) are delivered with their flags; review: held for review"),
		revisions: fs.String("revisions", "", "orderchange: a revised PO is delivered as an openTRANS ORDERCHANGE; order: as an ORDER marked as a revision in its remarks"),
		route:     fs.String("route-unaddressed", "", "on: uploads without template and party_id are routed (issue 29); off: refused with 422"),
		set:       map[string]bool{},
	}
	rest, ok := parseFlags(fs, args[1:])
	fs.Visit(func(f *flag.Flag) { v.set[f.Name] = true })
	if !ok || len(rest) != 1 || len(v.set) == 0 {
		fmt.Fprintln(env.Stderr, clientsSetUsage)
		return 2
	}
	if msg := v.check(); msg != "" {
		fmt.Fprintln(env.Stderr, "intakectl clients set: "+msg)
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		err := st.WithTx(ctx, func(tx *store.Store) error {
			cur, err := tx.Client(ctx, rest[0])
			if err != nil {
				return err
			}
			return v.apply(ctx, tx, cur)
		})
		if err != nil {
			return fail(env, "%v", err)
		}
		return runClientsShowWith(ctx, env, st, rest[0])
	})
}

// check says what is wrong with the values given ("" nothing).
func (v clientsSet) check() string {
	empty := func(name, val string) bool { return v.set[name] && val == "" } // given, but empty
	switch {
	case empty("review", *v.review) || !valid(document.ParseReview, *v.review):
		return "--review must be hold or off"
	case empty("flags", *v.flags) || !valid(document.ParseFlagPolicy, *v.flags):
		return "--flags must be deliver or review"
	case empty("revisions", *v.revisions) || !valid(document.ParseRevisionFormat, *v.revisions):
		return "--revisions must be orderchange or order"
	case v.set["route-unaddressed"] && *v.route != "on" && *v.route != "off":
		return "--route-unaddressed must be on or off"
	case v.set["review-timeout"] && *v.timeout < time.Second || *v.days < 0:
		return "--review-timeout must be at least 1s, --duplicate-window-days 0 or more"
	}
	return ""
}

// valid reports whether parse accepts s.
func valid[T any](parse func(string) (T, error), s string) bool {
	_, err := parse(s)
	return err == nil
}

// apply changes client cur's settings given, in tx.
func (v clientsSet) apply(ctx context.Context, tx *store.Store, cur document.Client) error {
	if v.set["review"] || v.set["review-timeout"] {
		r, t := cur.Review, cur.ReviewTimeout
		if v.set["review"] {
			r = document.Review(*v.review)
		}
		if v.set["review-timeout"] {
			t = *v.timeout
		}
		if err := tx.SetReview(ctx, cur.ID, r, t); err != nil {
			return err
		}
	}
	steps := []struct {
		flag string
		set  func() error
	}{
		{"flags", func() error { return tx.SetFlagPolicy(ctx, cur.ID, document.FlagPolicy(*v.flags)) }},
		{"revisions", func() error { return tx.SetRevisionFormat(ctx, cur.ID, document.RevisionFormat(*v.revisions)) }},
		{"route-unaddressed", func() error { return tx.SetRouteUnaddressed(ctx, cur.ID, *v.route == "on") }},
		{"duplicate-window-days", func() error { return tx.SetDuplicateWindow(ctx, cur.ID, *v.days) }},
	}
	for _, s := range steps {
		if v.set[s.flag] {
			if err := s.set(); err != nil {
				return err
			}
		}
	}
	return nil
}

// runClientsShow is `clients show ID`: the client's settings, never a
// token or secret.
func runClientsShow(ctx context.Context, args []string, env Env) int {
	if len(args) != 2 {
		fmt.Fprintln(env.Stderr, "usage: intakectl clients show ID")
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int { return runClientsShowWith(ctx, env, st, args[1]) })
}

func runClientsShowWith(ctx context.Context, env Env, st *store.Store, id string) int {
	c, err := readClientSettings(ctx, st, id)
	if err != nil {
		return fail(env, "%v", err)
	}
	secret := "no"
	if c.SigningSecret != "" {
		secret = "yes"
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	for _, kv := range [][2]string{{"id", c.ID}, {"name", c.Name}, {"webhook_url", c.WebhookURL},
		{"webhook_enabled", fmt.Sprint(c.WebhookEnabled)}, {"signing_secret", secret},
		{"unknown_party", string(c.UnknownParty)}, {"review", string(c.Review)},
		{"review_timeout", c.ReviewWait().String()}, {"duplicate_window_days", fmt.Sprint(c.DuplicateWindowDays)},
		{"flags", string(c.Flags)}, {"revisions", string(c.Revisions)}, {"route_unaddressed", onOff(c.RouteUnaddressed)}} {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
	}
	_ = tw.Flush()
	return 0
}

// onOff spells a switch as clients set takes it.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
