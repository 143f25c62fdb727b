package intakectl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/units"
)

func init() {
	register("units", "a client's unit table (buyer's unit → UN/ECE Rec 20 code × factor): units import --client ID [--replace] FILE.csv | list --client ID [--json] | delete --client ID [--article A] UNIT", runUnits)
}

const unitsUsage = `usage: intakectl units import --client ID [--replace] FILE.csv
       intakectl units list --client ID [--json]
       intakectl units delete --client ID [--article ARTICLE] UNIT

FILE.csv starts with a header naming its columns: unit and code, and
optionally article and factor ("-" reads standard input):

  unit,article,code,factor
  CS,,C62,12          one case (CS) of any article is 12 pieces (C62)
  Karton,4711,C62,24  a carton of article 4711 is 24 pieces
  Bund,,BE,           a bundle stays a bundle (factor 1)

code is a UN/ECE Recommendation 20 code of the BMEcat 2005 list (what
openTRANS ORDER_UNIT takes); PCE, H87, pcs are written C62. factor is a
decimal with a point, above 0 (empty: 1). Rows are added or replace the row of
the same unit and article; --replace makes the file the client's whole table.
The client's table wins over the built-in spellings; a unit in neither defers
the document (mapping_not_resolved). See docs/templates.md, "Units of measure".`

func runUnits(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, unitsUsage)
		return 2
	}
	fs := newFlags("units "+args[0], env)
	client := fs.String("client", "", "client id")
	replace := fs.Bool("replace", false, "import: the file becomes the client's whole unit table")
	article := fs.String("article", "", "delete: the row for this article (default: the row for every article)")
	asJSON := fs.Bool("json", false, "list: JSON")
	rest, ok := parseFlags(fs, args[1:])
	if !ok {
		return 2
	}
	if *client == "" {
		fmt.Fprintln(env.Stderr, unitsUsage)
		return 2
	}
	switch {
	case args[0] == "import" && len(rest) == 1:
		return importUnits(ctx, env, *client, rest[0], *replace)
	case args[0] == "list" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int {
			rows, err := st.Units(ctx, *client, nil, true)
			if err != nil {
				return fail(env, "%v", err)
			}
			return printUnits(env, rows, *asJSON)
		})
	case args[0] == "delete" && len(rest) == 1:
		return withStore(ctx, env, func(st *store.Store) int {
			if err := st.DeleteUnit(ctx, *client, units.Key(rest[0]), units.ArticleKey(*article)); err != nil {
				return fail(env, "%v", err)
			}
			fmt.Fprintf(env.Stdout, "deleted unit %q%s for %s\n", rest[0], forArticle(*article), *client)
			return 0
		})
	}
	fmt.Fprintln(env.Stderr, unitsUsage)
	return 2
}

func importUnits(ctx context.Context, env Env, client, path string, replace bool) int {
	rows, err := readUnitsCSV(path, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	return withStore(ctx, env, func(st *store.Store) int {
		if _, err := st.Client(ctx, client); err != nil {
			return fail(env, "client %s: %v", client, err)
		}
		// One transaction: a file imports completely or not at all.
		if err := st.PutUnits(ctx, client, rows, replace); err != nil {
			return fail(env, "%v", err)
		}
		how := "added or updated"
		if replace {
			how = "the client's whole table now"
		}
		fmt.Fprintf(env.Stdout, "imported %d unit(s) for %s (%s)\n", len(rows), client, how)
		return 0
	})
}

// readUnitsCSV reads a unit table file. Every row is checked before
// anything is stored; errors name the file and line.
func readUnitsCSV(path string, env Env) ([]store.UnitRow, error) {
	cr, done, err := openCSV(path, env)
	if err != nil {
		return nil, err
	}
	defer done()
	var cols map[string]int
	var out []store.UnitRow
	seen := map[[2]string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if cols == nil {
			if cols, err = unitColumns(rec); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			continue
		}
		row, err := unitRow(rec, cols)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		k := [2]string{row.UnitKey, row.ArticleKey}
		if prev, dup := seen[k]; dup {
			return nil, fmt.Errorf("%s:%d: unit %q%s already given on line %d", path, line, row.Unit, forArticle(row.Article), prev)
		}
		seen[k] = line
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no units (a header unit,article,code,factor and one row per unit)", path)
	}
	return out, nil
}

// unitColumns reads the header: unit and code are required, article and
// factor optional, nothing else.
func unitColumns(header []string) (map[string]int, error) {
	cols := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		switch h {
		case "unit", "article", "code", "factor":
		default:
			return nil, fmt.Errorf("header: unknown column %q (want unit,article,code,factor)", h)
		}
		if _, dup := cols[h]; dup {
			return nil, fmt.Errorf("header: column %q twice", h)
		}
		cols[h] = i
	}
	for _, need := range []string{"unit", "code"} {
		if _, ok := cols[need]; !ok {
			return nil, fmt.Errorf("header: no column %q (want unit,article,code,factor)", need)
		}
	}
	return cols, nil
}

func unitRow(rec []string, cols map[string]int) (store.UnitRow, error) {
	if len(rec) != len(cols) {
		return store.UnitRow{}, fmt.Errorf("want %d columns as the header, got %d", len(cols), len(rec))
	}
	get := func(c string) string {
		if i, ok := cols[c]; ok {
			return rec[i]
		}
		return ""
	}
	r, err := units.NewRule(get("unit"), get("article"), get("code"), get("factor"))
	if err != nil {
		return store.UnitRow{}, err
	}
	return store.UnitRow{Unit: r.Unit, UnitKey: units.Key(r.Unit), Article: r.Article, ArticleKey: units.ArticleKey(r.Article),
		Code: r.Code, Factor: r.Factor}, nil
}

func printUnits(env Env, rows []store.UnitRow, asJSON bool) int {
	if asJSON {
		type row struct {
			Unit      string    `json:"unit"`
			Article   string    `json:"article"`
			Code      string    `json:"code"`
			Factor    string    `json:"factor"`
			UpdatedAt time.Time `json:"updated_at"`
		}
		out := make([]row, len(rows))
		for i, r := range rows {
			out[i] = row{r.Unit, r.Article, r.Code, r.Factor, r.UpdatedAt.UTC()}
		}
		return printJSON(env, out)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UNIT\tARTICLE\tCODE\tFACTOR\tUPDATED")
	for _, r := range rows {
		a := r.Article
		if a == "" {
			a = "(every)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Unit, a, r.Code, r.Factor, r.UpdatedAt.UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
	return 0
}

func forArticle(a string) string {
	if strings.TrimSpace(a) == "" {
		return ""
	}
	return fmt.Sprintf(" (article %q)", strings.TrimSpace(a))
}
