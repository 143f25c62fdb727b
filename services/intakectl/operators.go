package intakectl

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/docintake/docintake/pkg/store"
)

func init() {
	register("operators", "ops console operators: operators add NAME [--clients a,b] [--no-token] | list | remove NAME | rotate NAME | set NAME --clients a,b|all", runOperators)
}

const operatorsUsage = "usage: intakectl operators add NAME [--clients a,b] [--no-token] | list | remove NAME | rotate NAME | set NAME --clients a,b|all"

// newOperatorToken is an operator's login token: as a client's, with a
// prefix of its own so a token found somewhere says what it opens.
func newOperatorToken() string { return "dio_" + strings.TrimPrefix(newToken(), "dit_") }

func runOperators(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, operatorsUsage)
		return 2
	}
	fs := newFlags("operators "+args[0], env)
	clients := fs.String("clients", "", "comma-separated client ids the operator is limited to (add: none is every client; set: all is every client)")
	noToken := fs.Bool("no-token", false, "no login token: the operator logs in only through the identity-aware proxy (INTAKE_OPS_TRUSTED_USER_HEADER)")
	rest, ok := parseFlags(fs, args[1:])
	if !ok {
		return 2
	}
	switch {
	case args[0] == "add" && len(rest) == 1:
		return withStore(ctx, env, func(st *store.Store) int { return operatorsAdd(ctx, env, st, rest[0], *clients, *noToken) })
	case args[0] == "list" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int { return operatorsList(ctx, env, st) })
	case args[0] == "remove" && len(rest) == 1:
		return withStore(ctx, env, func(st *store.Store) int {
			if err := st.RemoveOperator(ctx, rest[0]); err != nil {
				return fail(env, "%v", err)
			}
			fmt.Fprintf(env.Stderr, "operator %s removed; its sessions have ended\n", rest[0])
			return 0
		})
	case args[0] == "rotate" && len(rest) == 1:
		return withStore(ctx, env, func(st *store.Store) int { return operatorsRotate(ctx, env, st, rest[0]) })
	case args[0] == "set" && len(rest) == 1 && *clients != "":
		return withStore(ctx, env, func(st *store.Store) int {
			list := splitClients(*clients)
			if *clients == "all" {
				list = nil
			}
			if err := st.SetOperatorClients(ctx, rest[0], list); err != nil {
				return fail(env, "%v", err)
			}
			return 0
		})
	}
	fmt.Fprintln(env.Stderr, operatorsUsage)
	return 2
}

// splitClients parses --clients: "" is nil (every client).
func splitClients(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// operatorsAdd creates the account and prints its token once.
func operatorsAdd(ctx context.Context, env Env, st *store.Store, name, clients string, noToken bool) int {
	op := store.Operator{Name: name, Clients: splitClients(clients)}
	var tok string
	var hash *[32]byte
	if !noToken {
		tok = newOperatorToken()
		h := store.TokenHash(tok)
		hash = &h
	}
	if err := st.AddOperator(ctx, op, hash); err != nil {
		return fail(env, "%v", err)
	}
	if noToken {
		fmt.Fprintf(env.Stderr, "operator %s created without a token: it logs in through the identity-aware proxy only\n", name)
		return 0
	}
	fmt.Fprintf(env.Stderr, "operator %s created; its login token is printed once, hand it over now:\n", name)
	fmt.Fprintln(env.Stdout, tok)
	return 0
}

// operatorsRotate gives the operator a new token (printed once); the old
// one and the sessions opened with it end.
func operatorsRotate(ctx context.Context, env Env, st *store.Store, name string) int {
	tok := newOperatorToken()
	h := store.TokenHash(tok)
	if err := st.SetOperatorToken(ctx, name, &h); err != nil {
		return fail(env, "%v", err)
	}
	fmt.Fprintf(env.Stderr, "operator %s has a new token; the old one and its sessions have ended:\n", name)
	fmt.Fprintln(env.Stdout, tok)
	return 0
}

func operatorsList(ctx context.Context, env Env, st *store.Store) int {
	ops, err := st.Operators(ctx)
	if err != nil {
		return fail(env, "%v", err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCLIENTS\tTOKEN\tCREATED")
	for _, op := range ops {
		clients, token := "all", "no (proxy only)"
		if op.Clients != nil {
			clients = strings.Join(op.Clients, ",")
		}
		if op.HasToken {
			token = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", op.Name, clients, token, op.CreatedAt.UTC().Format("2006-01-02 15:04Z"))
	}
	_ = tw.Flush()
	return 0
}
