package intakectl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/docintake/docintake/pkg/store"
)

func init() {
	register("mappings", "master-data mappings of a client: mappings import --client ID --kind KIND FILE.csv | list --client ID [--kind KIND] | delete --client ID --kind KIND KEY", runMappings)
}

const mappingsUsage = `usage: intakectl mappings import --client ID --kind KIND FILE.csv
       intakectl mappings list --client ID [--kind KIND]
       intakectl mappings delete --client ID --kind KIND KEY

FILE.csv has two columns, key and value (a first row "key,value" is a
header); "-" reads standard input. A template's docintake.mappings entry
{field: buyer_article_id, table: article} looks keys up in kind "article".`

func runMappings(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, mappingsUsage)
		return 2
	}
	fs := newFlags("mappings "+args[0], env)
	client := fs.String("client", "", "client id")
	kind := fs.String("kind", "", "mapping table (e.g. article, delivery_address)")
	rest, ok := parseFlags(fs, args[1:])
	if !ok {
		return 2
	}
	if *client == "" {
		fmt.Fprintln(env.Stderr, mappingsUsage)
		return 2
	}
	switch {
	case args[0] == "import" && len(rest) == 1 && *kind != "":
		ms, err := readMappingsCSV(rest[0], *kind, env)
		if err != nil {
			return fail(env, "%v", err)
		}
		return withStore(ctx, env, func(st *store.Store) int {
			if _, err := st.Client(ctx, *client); err != nil {
				return fail(env, "client %s: %v", *client, err)
			}
			// One transaction: a file imports completely or not at all.
			if err := st.PutMappings(ctx, *client, ms); err != nil {
				return fail(env, "%v", err)
			}
			fmt.Fprintf(env.Stdout, "imported %d %s mapping(s) for %s\n", len(ms), *kind, *client)
			return 0
		})
	case args[0] == "list" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int {
			ms, err := st.Mappings(ctx, *client, *kind)
			if err != nil {
				return fail(env, "%v", err)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KIND\tKEY\tVALUE")
			for _, m := range ms {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Kind, m.Key, m.Value)
			}
			_ = tw.Flush()
			return 0
		})
	case args[0] == "delete" && len(rest) == 1 && *kind != "":
		return withStore(ctx, env, func(st *store.Store) int {
			if err := st.DeleteMapping(ctx, *client, *kind, rest[0]); err != nil {
				return fail(env, "%v", err)
			}
			fmt.Fprintf(env.Stdout, "deleted %s mapping %q for %s\n", *kind, rest[0], *client)
			return 0
		})
	}
	fmt.Fprintln(env.Stderr, mappingsUsage)
	return 2
}

// readMappingsCSV reads key,value rows. Errors name the line.
func readMappingsCSV(path, kind string, env Env) ([]store.Mapping, error) {
	cr, done, err := openCSV(path, env)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []store.Mapping
	seen := map[string]int{}
	for first := true; ; first = false {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if first && len(rec) == 2 && strings.EqualFold(strings.TrimSpace(rec[0]), "key") && strings.EqualFold(strings.TrimSpace(rec[1]), "value") {
			continue
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 2 {
			return nil, fmt.Errorf("%s:%d: want 2 columns (key,value), got %d", path, line, len(rec))
		}
		key, value := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		if key == "" || value == "" {
			return nil, fmt.Errorf("%s:%d: empty key or value", path, line)
		}
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s:%d: key %q already given on line %d", path, line, key, prev)
		}
		seen[key] = line
		out = append(out, store.Mapping{Kind: kind, Key: key, Value: value})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no mappings", path)
	}
	return out, nil
}
