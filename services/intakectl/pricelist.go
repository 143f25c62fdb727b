package intakectl

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/pricelist"
	"github.com/docintake/docintake/pkg/pricing"
	"github.com/docintake/docintake/pkg/store"
)

func init() {
	register("pricelist", "a client's price lists per buyer (flags, docs/orders.md): pricelist import|list|export|delete --client ID [--buyer PARTY]", runPriceList)
}

const priceListUsage = `usage: intakectl pricelist import --client ID [--buyer PARTY] FILE.csv
       intakectl pricelist list --client ID
       intakectl pricelist export --client ID [--buyer PARTY]
       intakectl pricelist delete --client ID [--buyer PARTY]

FILE.csv ("-" reads standard input) starts with the header
  ` + "article,currency,unit_price,price_basis,unit,valid_from,valid_to,tolerance_pct" + `
and replaces the client's list for PARTY (without --buyer: the list for
every buyer) as a whole; a file with any problem imports nothing. Export
writes the list as CSV to standard output. See docs/orders.md.`

func runPriceList(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, priceListUsage)
		return 2
	}
	fs := newFlags("pricelist "+args[0], env)
	client := fs.String("client", "", "client id")
	buyer := fs.String("buyer", "", "the buyer's party id (default: the list for every buyer)")
	rest, ok := parseFlags(fs, args[1:])
	if !ok {
		return 2
	}
	if *client == "" {
		fmt.Fprintln(env.Stderr, priceListUsage)
		return 2
	}
	switch {
	case args[0] == "import" && len(rest) == 1:
		return priceListImport(ctx, env, *client, *buyer, rest[0])
	case args[0] == "list" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int { return priceListList(ctx, env, st, *client) })
	case args[0] == "export" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int {
			if _, err := pricing.Export(ctx, st, *client, *buyer, env.Stdout); err != nil {
				return fail(env, "%v", err)
			}
			return 0
		})
	case args[0] == "delete" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int {
			if err := st.DeletePriceList(ctx, *client, *buyer); err != nil {
				return fail(env, "%v", err)
			}
			fmt.Fprintf(env.Stdout, "deleted the price list %s\n", listName(*client, *buyer))
			return 0
		})
	}
	fmt.Fprintln(env.Stderr, priceListUsage)
	return 2
}

func listName(client, buyer string) string {
	if buyer == "" {
		return "of " + client + " for every buyer"
	}
	return "of " + client + " for buyer " + buyer
}

// priceListImport reads path and replaces the list; an invalid file is
// reported problem by problem, one per line.
func priceListImport(ctx context.Context, env Env, client, buyer, path string) int {
	csv, err := readPriceList(path, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	return withStore(ctx, env, func(st *store.Store) int {
		info, err := pricing.Import(ctx, st, client, buyer, csv, "intakectl")
		var pe *pricelist.Error
		if errors.As(err, &pe) {
			fmt.Fprintf(env.Stderr, "intakectl: %s: invalid price list (nothing imported):\n", path)
			for _, p := range pe.Problems {
				fmt.Fprintf(env.Stderr, "  %s\n", p)
			}
			if pe.More > 0 {
				fmt.Fprintf(env.Stderr, "  and %d more problems\n", pe.More)
			}
			return 1
		}
		if err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(env.Stdout, "imported %d entries as the price list %s (replacing the list it had)\n", info.Entries,
			listName(client, buyer))
		return 0
	})
}

// readPriceList reads a CSV file ("-": stdin) up to the import limit.
func readPriceList(path string, env Env) ([]byte, error) {
	r, done, err := openInput(path, env)
	if err != nil {
		return nil, err
	}
	defer done()
	b, err := io.ReadAll(io.LimitReader(r, pricelist.DefaultMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > pricelist.DefaultMaxBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes: split the list by buyer", path, pricelist.DefaultMaxBytes)
	}
	return b, nil
}

func priceListList(ctx context.Context, env Env, st *store.Store, client string) int {
	lists, err := st.PriceLists(ctx, client)
	if err != nil {
		return fail(env, "%v", err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUYER\tENTRIES\tIMPORTED_AT\tIMPORTED_BY\tSHA256")
	for _, l := range lists {
		b := l.Buyer
		if b == "" {
			b = "(every buyer)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", b, l.Entries, l.ImportedAt.UTC().Format(time.RFC3339), l.ImportedBy,
			hex.EncodeToString(l.SHA256))
	}
	_ = tw.Flush()
	return 0
}
