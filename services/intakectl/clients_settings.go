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

const clientsSetUsage = "usage: intakectl clients set ID [--review hold|off] [--review-timeout 4h] [--duplicate-window-days N] [--flags deliver|review] [--route-unaddressed on|off]"

// clientSettings are a client's settings beside its webhook: what
// `clients set` changes and `clients show` and `list` print.
type clientSettings struct {
	document.Client
	DuplicateWindowDays int
	Flags               document.FlagPolicy
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
	return clientSettings{Client: c, DuplicateWindowDays: days, Flags: flags}, err
}

// runClientsSet is `clients set ID`: changes only the settings given, in
// one transaction.
func runClientsSet(ctx context.Context, args []string, env Env) int {
	fs := newFlags("clients set", env)
	review := fs.String("review", "", "hold: keep rejections a person can fix for review; off: deliver them at once")
	timeout := fs.Duration("review-timeout", 0, "how long a held rejection waits for an operator before it is delivered (at least 1s)")
	days := fs.Int("duplicate-window-days", 0, "days a delivered PO counts for duplicates and revisions; 0 off")
	flags := fs.String("flags", "", "deliver: flagged orders (price, delivery date) are delivered with their flags; review: held for review")
	route := fs.String("route-unaddressed", "", "on: uploads without template and party_id are routed (issue 29); off: refused with 422")
	rest, ok := parseFlags(fs, args[1:])
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !ok || len(rest) != 1 || len(set) == 0 {
		fmt.Fprintln(env.Stderr, clientsSetUsage)
		return 2
	}
	if _, err := document.ParseReview(*review); err != nil || set["review"] && *review == "" {
		fmt.Fprintln(env.Stderr, "intakectl clients set: --review must be hold or off")
		return 2
	}
	if _, err := document.ParseFlagPolicy(*flags); err != nil || set["flags"] && *flags == "" {
		fmt.Fprintln(env.Stderr, "intakectl clients set: --flags must be deliver or review")
		return 2
	}
	if set["route-unaddressed"] && *route != "on" && *route != "off" {
		fmt.Fprintln(env.Stderr, "intakectl clients set: --route-unaddressed must be on or off")
		return 2
	}
	if set["review-timeout"] && *timeout < time.Second || *days < 0 {
		fmt.Fprintln(env.Stderr, "intakectl clients set: --review-timeout must be at least 1s, --duplicate-window-days 0 or more")
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		err := st.WithTx(ctx, func(tx *store.Store) error {
			cur, err := tx.Client(ctx, rest[0])
			if err != nil {
				return err
			}
			if set["review"] || set["review-timeout"] {
				r, t := cur.Review, cur.ReviewTimeout
				if set["review"] {
					r = document.Review(*review)
				}
				if set["review-timeout"] {
					t = *timeout
				}
				if err := tx.SetReview(ctx, cur.ID, r, t); err != nil {
					return err
				}
			}
			if set["flags"] {
				if err := tx.SetFlagPolicy(ctx, cur.ID, document.FlagPolicy(*flags)); err != nil {
					return err
				}
			}
			if set["route-unaddressed"] {
				if err := tx.SetRouteUnaddressed(ctx, cur.ID, *route == "on"); err != nil {
					return err
				}
			}
			if set["duplicate-window-days"] {
				return tx.SetDuplicateWindow(ctx, cur.ID, *days)
			}
			return nil
		})
		if err != nil {
			return fail(env, "%v", err)
		}
		return runClientsShowWith(ctx, env, st, rest[0])
	})
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
		{"flags", string(c.Flags)}, {"route_unaddressed", onOff(c.RouteUnaddressed)}} {
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
