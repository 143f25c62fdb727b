package intakectl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

func init() {
	register("review", "rejections held for review: review list [--client ID] | show LOG_ID [--json] | approve LOG_ID --order FILE.json [--comment TEXT] | release LOG_ID | sample LOG_ID | draft LOG_ID | map LOG_ID --kind K --key X --value Y", runReview)
}

const reviewUsage = "usage: intakectl review list [--client ID] [--limit N] | show LOG_ID [--json] | approve LOG_ID --order FILE.json [--comment TEXT] | release LOG_ID  [--as NAME]\n" + learnUsage

// reviewFlags are review's options.
type reviewFlags struct {
	client, order, comment, as *string
	limit                      *int
	json                       *bool
}

func runReview(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprintln(env.Stderr, reviewUsage)
		return 2
	}
	if run, ok := learnCommands[args[0]]; ok { // review_learn.go
		return run(ctx, args[1:], env)
	}
	fs := newFlags("review "+args[0], env)
	f := reviewFlags{client: fs.String("client", "", "only this client's documents"),
		limit:   fs.Int("limit", 100, "list at most this many documents"),
		json:    fs.Bool("json", false, `print {"log_id", "reason", "detail", "order"}`),
		order:   fs.String("order", "", "the corrected order: a JSON file in the shape of the result JSON's order"),
		comment: fs.String("comment", "", "confirms a difference the corrected order's amounts leave; recorded on the history"),
		as:      fs.String("as", cmp.Or(env.Getenv("USER"), "unknown"), "operator name recorded on the document's history")}
	rest, ok := parseFlags(fs, args[1:])
	if !ok {
		return 2
	}
	switch {
	case args[0] == "list" && len(rest) == 0:
		return withStore(ctx, env, func(st *store.Store) int { return reviewList(ctx, env, st, *f.client, *f.limit) })
	case args[0] == "show" && len(rest) == 1, args[0] == "release" && len(rest) == 1,
		args[0] == "approve" && len(rest) == 1 && *f.order != "":
		return withStore(ctx, env, func(st *store.Store) int { return reviewAction(ctx, env, st, args[0], rest[0], f) })
	}
	fmt.Fprintln(env.Stderr, reviewUsage)
	return 2
}

func reviewList(ctx context.Context, env Env, st *store.Store, client string, limit int) int {
	held, err := st.ReviewQueue(ctx, client, limit)
	if err != nil {
		return fail(env, "%v", err)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOG_ID\tCLIENT\tTEMPLATE\tREASON\tHELD SINCE\tRELEASED AT")
	for _, h := range held {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.LogID, h.ClientID, h.Template, reasonText(h.StatusReason),
			h.UpdatedAt.UTC().Format(time.RFC3339), h.Until.UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
	if len(held) == limit {
		fmt.Fprintf(env.Stderr, "(first %d shown; --limit for more)\n", limit)
	}
	return 0
}

// reviewAction runs show, release or approve on one document.
func reviewAction(ctx context.Context, env Env, st *store.Store, action, logID string, f reviewFlags) int {
	r, d, closeFn, code := documentReview(ctx, env, st, logID)
	if code != 0 {
		return code
	}
	defer closeFn()
	who := "operator:" + *f.as
	switch action {
	case "show":
		return reviewShow(ctx, env, r, d, *f.json)
	case "release":
		if _, err := r.Release(ctx, d, who); err != nil {
			return fail(env, "%s: %v", logID, err)
		}
		fmt.Fprintf(env.Stdout, "%s: released; the rejection is delivered\n", logID)
		return 0
	}
	var corrected resultjson.Order
	b, err := os.ReadFile(*f.order)
	if err == nil {
		err = json.Unmarshal(b, &corrected)
	}
	if err != nil {
		return fail(env, "--order %s: %v", *f.order, err)
	}
	got, err := r.Approve(ctx, d, corrected, *f.comment, who)
	if err != nil {
		return fail(env, "%s: %v", logID, err)
	}
	if got.State == document.StateProcessedIgnored {
		fmt.Fprintf(env.Stdout, "%s: approved; its PO was delivered before with the same content: ignored as its duplicate, not delivered again (intakectl documents show %s)\n", logID, logID)
		return 0
	}
	fmt.Fprintf(env.Stdout, "%s: approved; delivered as success\n", logID)
	return 0
}

// reviewView is `review show --json`.
type reviewView struct {
	LogID  string           `json:"log_id"`
	Reason string           `json:"reason"`
	Detail string           `json:"detail"`
	Order  resultjson.Order `json:"order"`
}

func reviewShow(ctx context.Context, env Env, r lifecycle.Review, d document.Document, asJSON bool) int {
	rd, err := r.Held(ctx, d)
	if err != nil {
		return fail(env, "%s: %v", d.LogID, err)
	}
	v := reviewView{LogID: d.LogID, Reason: rd.Reason.WireValue(), Detail: rd.Detail, Order: rd.Result.Order}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	var out any = v
	if !asJSON {
		fmt.Fprintf(env.Stdout, "log_id  %s\nclient  %s\nreason  %s\ndetail  %s\norder as read (edit it, then review approve %s --order FILE):\n",
			v.LogID, d.ClientID, v.Reason, v.Detail, v.LogID)
		out = v.Order
	}
	if err := enc.Encode(out); err != nil {
		return fail(env, "%v", err)
	}
	return 0
}

// openReview connects what the review actions need besides the store: the
// object store (INTAKE_S3_*, or standalone's file store under
// INTAKE_DATA_DIR) and the templates the documents were processed with.
func openReview(ctx context.Context, env Env, st *store.Store) (lifecycle.Review, func(), error) {
	cfg, err := config.FromEnv(env.Getenv)
	if err != nil {
		return lifecycle.Review{}, nil, err
	}
	var objs objectstore.Store
	if cfg.S3.Endpoint != "" {
		objs, err = objectstore.NewS3(objectstore.S3Config{Endpoint: cfg.S3.Endpoint, Region: cfg.S3.Region, Bucket: cfg.S3.Bucket,
			AccessKey: cfg.S3.AccessKey, SecretKey: cfg.S3.SecretKey, PathStyle: cfg.S3.PathStyle})
	} else {
		objs, err = objectstore.NewFS(filepath.Join(cfg.DataDir, "objects"))
	}
	if err != nil {
		return lifecycle.Review{}, nil, err
	}
	// Loaded once (no watching): the pinned version of the document at hand
	// is all that is asked.
	cat, err := catalogue.Open(ctx, st, zap.NewNop(), catalogue.Options{Recheck: -1})
	if err != nil {
		return lifecycle.Review{}, nil, err
	}
	return lifecycle.Review{Store: st, Objects: objs, Pinned: cat.Pinned, Prefix: cfg.SubjectPrefix}, cat.Close, nil
}
