package intakectl

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"text/tabwriter"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
)

func init() {
	register("clients", "manage clients: add, list, show, set (review, review timeout, duplicate window), token (rotate), revoke-token, enable, disable, unknown-party", runClients)
	register("migrate", "apply database migrations: migrate up", runMigrate)
	register("config", "print the configuration variables: config print [--markdown]", runConfig)
}

// openStore connects with INTAKE_DATABASE_URL and migrates.
func openStore(ctx context.Context, env Env) (*store.Store, error) {
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return nil, err
	}
	if err := cfg.RequireDatabase(); err != nil {
		return nil, err
	}
	return store.Connect(ctx, cfg.DatabaseURL)
}

// newToken returns 32 random bytes, URL-safe base64: what a client puts
// after "Bearer ".
func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "dit_" + base64.RawURLEncoding.EncodeToString(b[:])
}

func runClients(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, "usage: intakectl clients add|list|show|set|token|revoke-token|enable|disable|unknown-party ...")
		return 2
	}
	switch args[0] {
	case "add":
		return runClientsAdd(ctx, args, env)
	case "token":
		// Rotation without downtime: a second token is valid alongside the
		// first until the old one is revoked.
		if len(args) != 2 {
			fmt.Fprintln(env.Stderr, "usage: intakectl clients token ID")
			return 2
		}
		st, err := openStore(ctx, env)
		if err != nil {
			return fail(env, "%v", err)
		}
		defer st.Pool().Close()
		c, err := st.Client(ctx, args[1])
		if err != nil {
			return fail(env, "%v", err)
		}
		tok := newToken()
		if err := st.UpsertClient(ctx, c, store.TokenHash(tok)); err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintln(env.Stdout, tok)
		return 0
	case "revoke-token":
		if len(args) != 3 {
			fmt.Fprintln(env.Stderr, "usage: intakectl clients revoke-token ID TOKEN")
			return 2
		}
		st, err := openStore(ctx, env)
		if err != nil {
			return fail(env, "%v", err)
		}
		defer st.Pool().Close()
		if err := st.DeleteClientToken(ctx, args[1], store.TokenHash(args[2])); err != nil {
			return fail(env, "%v", err)
		}
		return 0
	case "list":
		return runClientsList(ctx, env)
	case "show":
		return runClientsShow(ctx, args, env) // clients_settings.go
	case "set":
		return runClientsSet(ctx, args, env)
	case "unknown-party":
		return runUnknownParty(ctx, args, env)
	case "enable", "disable":
		if len(args) != 2 {
			fmt.Fprintf(env.Stderr, "usage: intakectl clients %s ID\n", args[0])
			return 2
		}
		st, err := openStore(ctx, env)
		if err != nil {
			return fail(env, "%v", err)
		}
		defer st.Pool().Close()
		if err := st.SetWebhookEnabled(ctx, args[1], args[0] == "enable"); err != nil {
			return fail(env, "%v", err)
		}
		return 0
	}
	fmt.Fprintf(env.Stderr, "intakectl clients: unknown subcommand %q\n", args[0])
	return 2
}

// runClientsAdd is `clients add`: a new client and its first access token,
// printed once.
func runClientsAdd(ctx context.Context, args []string, env Env) int {
	fs := newFlags("clients add", env)
	id := fs.String("id", "", "client id ([a-z0-9_-]{1,64})")
	name := fs.String("name", "", "display name")
	hook := fs.String("webhook-url", "", "URL results are POSTed to")
	hookTok := fs.String("webhook-token", "", "bearer token sent on webhook calls")
	secret := fs.String("signing-secret", "", "Standard Webhooks signing secret (base64, optional whsec_ prefix)")
	unknownParty := fs.String("unknown-party", "reject", "a party_id without a template: reject (400) or generic (the generic reader)")
	if _, ok := parseFlags(fs, args[1:]); !ok {
		return 2
	}
	if !document.ValidClientID(*id) || *hook == "" {
		fmt.Fprintln(env.Stderr, "intakectl clients add: --id ([a-z0-9_-]{1,64}) and --webhook-url are required")
		return 2
	}
	up, err := document.ParseUnknownParty(*unknownParty)
	if err != nil {
		fmt.Fprintf(env.Stderr, "intakectl clients add: --unknown-party: %v\n", err)
		return 2
	}
	st, err := openStore(ctx, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer st.Pool().Close()
	if _, err := st.Client(ctx, *id); err == nil {
		return fail(env, "client %s exists already (use `intakectl clients token %s` for a new token)", *id, *id)
	}
	tok := newToken()
	c := document.Client{ID: *id, Name: *name, WebhookURL: *hook, WebhookToken: *hookTok, SigningSecret: *secret,
		WebhookEnabled: true, UnknownParty: up}
	if err := st.UpsertClient(ctx, c, store.TokenHash(tok)); err != nil {
		return fail(env, "%v", err)
	}
	fmt.Fprintf(env.Stderr, "client %s created; its access token is printed once, store it now:\n", *id)
	fmt.Fprintln(env.Stdout, tok)
	return 0
}

// runClientsList is `clients list`: every client with its webhook state and
// settings (never a token).
func runClientsList(ctx context.Context, env Env) int {
	st, err := openStore(ctx, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer st.Pool().Close()
	cs, err := st.Clients(ctx)
	if err != nil {
		return fail(env, "%v", err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tWEBHOOK\tENABLED\tUNKNOWN_PARTY\tREVIEW\tREVIEW_TIMEOUT\tDUPLICATE_WINDOW_DAYS")
	for _, c := range cs {
		days, err := st.DuplicateWindow(ctx, c.ID)
		if err != nil {
			return fail(env, "%v", err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\t%s\t%d\n", c.ID, c.Name, c.WebhookURL, c.WebhookEnabled, c.UnknownParty,
			c.Review, c.ReviewWait(), days)
	}
	_ = tw.Flush()
	return 0
}

// runUnknownParty sets what a client's uploads with a party_id no template
// claims get: `clients unknown-party ID reject|generic`.
func runUnknownParty(ctx context.Context, args []string, env Env) int {
	if len(args) != 3 {
		fmt.Fprintln(env.Stderr, "usage: intakectl clients unknown-party ID reject|generic")
		return 2
	}
	v, err := document.ParseUnknownParty(args[2])
	if err != nil || args[2] == "" {
		fmt.Fprintln(env.Stderr, "usage: intakectl clients unknown-party ID reject|generic")
		return 2
	}
	st, err := openStore(ctx, env)
	if err != nil {
		return fail(env, "%v", err)
	}
	defer st.Pool().Close()
	if err := st.SetUnknownParty(ctx, args[1], v); err != nil {
		return fail(env, "%v", err)
	}
	return 0
}

func runMigrate(ctx context.Context, args []string, env Env) int {
	if len(args) != 1 || args[0] != "up" {
		fmt.Fprintln(env.Stderr, "usage: intakectl migrate up")
		return 2
	}
	st, err := openStore(ctx, env) // OpenStore migrates
	if err != nil {
		return fail(env, "%v", err)
	}
	st.Pool().Close()
	fmt.Fprintln(env.Stdout, "migrations applied")
	return 0
}

func runConfig(_ context.Context, args []string, env Env) int {
	if len(args) == 0 || args[0] != "print" {
		fmt.Fprintln(env.Stderr, "usage: intakectl config print [--markdown]")
		return 2
	}
	if len(args) > 1 && args[1] == "--markdown" {
		fmt.Fprint(env.Stdout, config.Markdown())
		return 0
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	for _, v := range config.Vars {
		val := env.Getenv(v.Name)
		src := "env"
		if val == "" {
			val, src = v.Default, "default"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, redact(v.Name, val), src)
	}
	_ = tw.Flush()
	return 0
}

// redacted stands for a secret in printed configuration: the output is
// pasted into tickets and chats, where a token or password must not go.
const redacted = "[redacted]"

var (
	// secretName matches settings whose whole value is a secret
	// (INTAKE_OPS_TOKEN, INTAKE_S3_SECRET_KEY, ...).
	secretName = regexp.MustCompile(`TOKEN|PASSWORD|SECRET|KEY`)
	// urlUserInfo is the user info of every URL in a value (NATS takes a
	// comma-separated list, and nats://TOKEN@host carries the token as
	// the user name): greedy up to the last "@" before the host ends, so
	// an unescaped "@" in a password is covered too.
	urlUserInfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@`)
	// secretParam is a password, token, secret or key given as a URL
	// query parameter (postgres://host/db?password=...) or as a key=value
	// connection string (host=... password=...).
	secretParam = regexp.MustCompile(`(?i)((?:^|[?&;\s])[a-z_]*(?:password|secret|token|key)[a-z_]*=)(?:'[^']*'|[^&\s]*)`)
)

// redact hides the secrets of one setting's value: all of it when the
// setting's name says it is a secret, else any credentials inside URLs and
// connection strings.
func redact(name, val string) string {
	if val == "" {
		return val
	}
	if secretName.MatchString(name) {
		return redacted
	}
	val = urlUserInfo.ReplaceAllString(val, "${1}"+redacted+"@")
	return secretParam.ReplaceAllString(val, "${1}"+redacted)
}
