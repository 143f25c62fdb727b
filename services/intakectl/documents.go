package intakectl

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/store"
)

func init() {
	register("documents", "one document with its template version per attempt and its history: documents show LOG_ID [--json]", runDocuments)
}

// documentJSON is `documents show --json`: template and template_version are
// the latest attempt's; attempts is every attempt, events the history.
type documentJSON struct {
	LogID           string        `json:"log_id"`
	ClientID        string        `json:"client_id"`
	MessageID       string        `json:"message_id"`
	Filename        string        `json:"filename"`
	State           string        `json:"state"`
	StatusReason    *string       `json:"status_reason"`
	Template        string        `json:"template"`
	TemplateVersion *int          `json:"template_version"`
	TemplateSHA256  *string       `json:"template_sha256"`
	Source          string        `json:"source,omitempty"`
	Result          string        `json:"result,omitempty"`
	ResultJSON      string        `json:"result_json,omitempty"`
	CreatedAt       time.Time     `json:"created_at"`
	UpdatedAt       time.Time     `json:"updated_at"`
	Attempts        []attemptJSON `json:"attempts"`
	Events          []eventJSON   `json:"events"`
}

type attemptJSON struct {
	Attempt         int       `json:"attempt"`
	Template        string    `json:"template"`
	TemplateClient  *string   `json:"template_client"`
	TemplateVersion int       `json:"template_version"`
	TemplateSHA256  string    `json:"template_sha256"`
	StartedAt       time.Time `json:"started_at"`
}

type eventJSON struct {
	At     time.Time `json:"at"`
	From   *string   `json:"from"`
	To     string    `json:"to"`
	Reason *string   `json:"reason"`
	Actor  string    `json:"actor"`
	Detail string    `json:"detail,omitempty"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func runDocuments(ctx context.Context, args []string, env Env) int {
	fs := newFlags("documents", env)
	asJSON := fs.Bool("json", false, "JSON output")
	rest, ok := parseFlags(fs, args)
	if !ok {
		return 2
	}
	if len(rest) != 2 || rest[0] != "show" {
		fmt.Fprintln(env.Stderr, "usage: intakectl documents show LOG_ID [--json]")
		return 2
	}
	return withStore(ctx, env, func(st *store.Store) int {
		out, err := showDocument(ctx, st, rest[1])
		if err != nil {
			return fail(env, "%s: %v", rest[1], err)
		}
		if *asJSON {
			b, _ := json.MarshalIndent(out, "", "  ")
			fmt.Fprintf(env.Stdout, "%s\n", b)
			return 0
		}
		printDocument(env, out)
		return 0
	})
}

func showDocument(ctx context.Context, st *store.Store, logID string) (documentJSON, error) {
	d, err := st.DocumentByLogIDAnyClient(ctx, logID)
	if err != nil {
		return documentJSON{}, err
	}
	atts, err := st.Attempts(ctx, d.ID)
	if err != nil {
		return documentJSON{}, err
	}
	ev, err := st.Events(ctx, d.ID)
	if err != nil {
		return documentJSON{}, err
	}
	out := documentJSON{LogID: d.LogID, ClientID: d.ClientID, MessageID: d.MessageID, Filename: d.Filename,
		State: string(d.State), Template: d.Template, Source: d.SourcePath, Result: d.ResultPath,
		ResultJSON: d.ResultJSONPath, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		Attempts: []attemptJSON{}, Events: []eventJSON{}}
	if d.StatusReason != "" {
		out.StatusReason = optional(d.StatusReason.WireValue())
	}
	for _, a := range atts {
		out.Attempts = append(out.Attempts, attemptJSON{Attempt: a.Attempt, Template: a.Name,
			TemplateClient: optional(a.ClientID), TemplateVersion: a.Version, TemplateSHA256: hex.EncodeToString(a.SHA256),
			StartedAt: a.StartedAt})
	}
	if n := len(atts); n > 0 {
		last := out.Attempts[n-1]
		out.Template, out.TemplateVersion, out.TemplateSHA256 = last.Template, &last.TemplateVersion, &last.TemplateSHA256
	}
	for _, e := range ev {
		var reason *string
		if e.Reason != "" {
			reason = optional(e.Reason.WireValue())
		}
		out.Events = append(out.Events, eventJSON{At: e.At, From: optional(string(e.From)), To: string(e.To),
			Reason: reason, Actor: e.Actor, Detail: e.Detail})
	}
	return out, nil
}

func printDocument(env Env, d documentJSON) {
	version := "-"
	if d.TemplateVersion != nil {
		version = fmt.Sprintf("v%d (sha256 %s)", *d.TemplateVersion, *d.TemplateSHA256)
	}
	reason := "-"
	if d.StatusReason != nil {
		reason = *d.StatusReason
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	for _, kv := range [][2]string{
		{"log_id", d.LogID}, {"client", d.ClientID}, {"message_id", d.MessageID}, {"filename", d.Filename},
		{"state", d.State}, {"status_reason", reason}, {"template", d.Template}, {"template_version", version},
		{"source", dash(d.Source)}, {"result", dash(d.Result)}, {"created", d.CreatedAt.UTC().Format(time.RFC3339)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
	}
	_ = tw.Flush()
	fmt.Fprintln(env.Stdout, "\nattempts:")
	for _, a := range d.Attempts {
		sc := "global"
		if a.TemplateClient != nil {
			sc = "client " + *a.TemplateClient
		}
		fmt.Fprintf(env.Stdout, "  %d  %s  %s v%d  sha256 %s  (%s)\n", a.Attempt, a.StartedAt.UTC().Format(time.RFC3339),
			a.Template, a.TemplateVersion, a.TemplateSHA256, sc)
	}
	fmt.Fprintln(env.Stdout, "\nhistory:")
	for _, e := range d.Events {
		from := "(new)"
		if e.From != nil {
			from = *e.From
		}
		r := ""
		if e.Reason != nil {
			r = *e.Reason
		}
		fmt.Fprintf(env.Stdout, "  %s  %s → %s  %s  %s\n", e.At.UTC().Format(time.RFC3339), from, e.To, e.Actor, r)
		for i, l := range detailLines(e.Detail) {
			indent := "      "
			if i > 0 {
				indent += "  "
			}
			fmt.Fprintf(env.Stdout, "%s%s\n", indent, l)
		}
	}
}

// Long history details are lists joined by "; " (a revision's changes line
// by line, flags, an approval's changed values): cut at 500 characters,
// the changes an operator looks for would be lost. So a detail longer than
// detailWidth is printed clause by clause, each cut at 500, at most
// maxDetailLines.
const (
	detailWidth    = 160
	maxDetailLines = 200
)

// detailLines is how an event's detail is printed (none when empty).
func detailLines(detail string) []string {
	if detail == "" {
		return nil
	}
	if len(detail) <= detailWidth {
		return []string{oneLine(detail, detailWidth)}
	}
	parts := strings.Split(detail, "; ")
	var out []string
	for i, p := range parts {
		if i == maxDetailLines {
			out = append(out, fmt.Sprintf("… and %d more", len(parts)-maxDetailLines))
			break
		}
		out = append(out, oneLine(p, 500))
	}
	return out
}
