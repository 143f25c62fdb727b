package intakectl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/docintake/docintake/pkg/client"
)

func init() {
	register("upload", "upload PDFs (directories recursively, .zip archives) once each, optionally wait for their outcomes: upload --url U --token T [--party-id ID | --template NAME] [--wait] FILE|DIR|ZIP...", runUpload)
}

// uploadFile is one distinct file content to upload (files with the same
// bytes share one document).
type uploadFile struct {
	paths     []string
	src       source // the first of paths, what is uploaded
	messageID string
	// Filled in by the upload.
	logID   string
	existed bool // the service already had it (a re-run)
	err     error
	// Filled in by --wait.
	state    client.State
	reason   string
	template string // the template the service read it with ("" none)
	flags    []client.Flag
}

func runUpload(ctx context.Context, args []string, env Env) int {
	fset := newFlags("upload", env)
	baseURL := fset.String("url", env.Getenv("DOCINTAKE_URL"), "API base URL (DOCINTAKE_URL), e.g. http://127.0.0.1:8080")
	token := fset.String("token", env.Getenv("DOCINTAKE_TOKEN"), "access token (DOCINTAKE_TOKEN)")
	partyID := fset.String("party-id", "", "party id selecting the template of every file (or --template; neither: each file is routed)")
	tmpl := fset.String("template", "", "template name for every file (or --party-id; neither: each file is routed)")
	subject := fset.String("subject", "", "e-mail subject sent with every file (default: the file's name)")
	conc := fset.Int("concurrency", 4, "uploads (and, with --wait, document queries) in flight")
	wait := fset.Bool("wait", false, "follow every document until processing decided its outcome, then print a summary")
	waitTimeout := fset.Duration("wait-timeout", 30*time.Minute, "with --wait: give up on documents still undecided after this long")
	fset.Usage = func() {
		fmt.Fprintln(env.Stderr, "usage: intakectl upload --url URL --token TOKEN [--party-id ID | --template NAME] [--subject S] [--concurrency N] [--wait] FILE|DIR|ZIP...")
		fmt.Fprintln(env.Stderr, "Uploads every PDF (directories recursively, and the PDFs inside .zip archives) with a message_id derived from\nthe file's content, so a re-run uploads nothing twice and reports the existing log_ids. Without --party-id and\n--template each file is routed by the service (a mixed archive of many buyers' POs: the client's templates\ncompete on their keywords; the client needs route_unaddressed, else each upload is refused with 422), and --wait\nreports the template each file got. Exit 0 only when every file was accepted (and, with --wait, none failed).")
		fset.PrintDefaults()
	}
	paths, ok := parseFlags(fset, args)
	if !ok {
		return 2
	}
	switch {
	case len(paths) == 0:
		fset.Usage()
		return 2
	case *baseURL == "" || *token == "":
		return usageErr(env, "upload: --url and --token (or DOCINTAKE_URL and DOCINTAKE_TOKEN) are required")
	case *partyID != "" && *tmpl != "":
		return usageErr(env, "upload: give --party-id or --template, not both (neither: each file is routed)")
	case *conc < 1:
		return usageErr(env, "upload: --concurrency must be at least 1")
	}
	c, err := client.New(*baseURL, *token, &client.Options{MaxAttempts: 10, UserAgent: "intakectl-upload/1"})
	if err != nil {
		return usageErr(env, "upload: %v", err)
	}
	files, err := collectSources(paths)
	if err != nil {
		return fail(env, "upload: %v", err)
	}
	if len(files) == 0 {
		return fail(env, "upload: no PDF files in %s", strings.Join(paths, " "))
	}
	docs, err := groupByContent(files)
	if err != nil {
		return fail(env, "upload: %v", err)
	}
	pr := newProgress(env, len(docs))

	pr.phase("upload")
	forEach(docs, *conc, func(d *uploadFile) {
		d.logID, d.existed, d.err = uploadOne(ctx, c, d, *partyID, *tmpl, *subject)
		pr.done(uploadLine(d), d.err != nil)
	})
	pr.finish()
	failed := printUploaded(env.Stdout, len(files), docs)
	code := 0
	if failed > 0 {
		code = 1
	}
	if !*wait || ctx.Err() != nil {
		if failed > 0 {
			printFailures(env.Stdout, docs)
		}
		return code
	}

	waitOutcomes(ctx, env, c, docs, *conc, *waitTimeout)
	if summarize(env.Stdout, docs) {
		code = 1
	}
	return code
}

func usageErr(env Env, format string, args ...any) int {
	fail(env, format, args...)
	return 2
}

// groupByContent hashes every source; sources with the same bytes become
// one document whose message_id is derived from the content, so the service
// recognises a re-run (same message_id, same bytes: the original log_id).
func groupByContent(files []source) ([]*uploadFile, error) {
	byID := map[string]*uploadFile{}
	var docs []*uploadFile
	for _, f := range files {
		id, err := f.messageID()
		if err != nil {
			return nil, err
		}
		if d := byID[id]; d != nil {
			d.paths = append(d.paths, f.name)
			continue
		}
		d := &uploadFile{paths: []string{f.name}, src: f, messageID: id}
		byID[id] = d
		docs = append(docs, d)
	}
	return docs, nil
}

// printUploaded prints how many of the documents were uploaded, already
// there or refused, and returns the number refused.
func printUploaded(w io.Writer, files int, docs []*uploadFile) (failed int) {
	var accepted, existed int
	for _, d := range docs {
		switch {
		case d.err != nil:
			failed++
		case d.existed:
			existed++
		default:
			accepted++
		}
	}
	fmt.Fprintf(w, "%d files, %d documents: %d uploaded, %d already there, %d refused\n",
		files, len(docs), accepted, existed, failed)
	return failed
}

// waitOutcomes follows every accepted document until processing decided
// its outcome or timeout passed, recording state, reason or error in it.
func waitOutcomes(ctx context.Context, env Env, c *client.Client, docs []*uploadFile, conc int, timeout time.Duration) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pending := slices.DeleteFunc(slices.Clone(docs), func(d *uploadFile) bool { return d.err != nil })
	pr := newProgress(env, len(pending))
	pr.phase("wait")
	forEach(pending, conc, func(d *uploadFile) {
		doc, err := c.WaitOutcome(wctx, d.logID)
		d.state, d.reason, d.template, d.flags, d.err = doc.State, doc.StatusReason, doc.Template, doc.Flags, err
		pr.done(fmt.Sprintf("%-9s %s %-20s %s", cmp.Or(d.state.Outcome(), "pending"), d.logID, dash(d.template), d.paths[0]), d.err != nil)
	})
	pr.finish()
}

func uploadOne(ctx context.Context, c *client.Client, d *uploadFile, partyID, tmpl, subject string) (logID string, existed bool, err error) {
	f, err := d.src.open()
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	name := d.src.baseName()
	ack, err := c.Upload(ctx, client.UploadRequest{File: f, Filename: name, MessageID: d.messageID,
		Subject: cmp.Or(subject, name), Template: tmpl, PartyID: partyID})
	if err != nil {
		return "", false, err
	}
	// A repeated upload is answered "already received; state …".
	return ack.LogID, strings.HasPrefix(ack.Status, "already"), nil
}

func uploadLine(d *uploadFile) string {
	switch {
	case d.err != nil:
		return fmt.Sprintf("%-9s %s: %v", "refused", strings.Join(d.paths, ", "), d.err)
	case d.existed:
		return fmt.Sprintf("%-9s %s %s", "exists", d.logID, strings.Join(d.paths, ", "))
	}
	return fmt.Sprintf("%-9s %s %s", "uploaded", d.logID, strings.Join(d.paths, ", "))
}

// summarize prints the outcome table of --wait and the documents that
// failed or are undecided; it reports whether any did.
func summarize(w io.Writer, docs []*uploadFile) (bad bool) {
	outcomes := map[string]int{}
	reasons := map[string]int{} // "rejected cannot_parse_items" → count
	states := map[client.State]int{}
	for _, d := range docs {
		o := d.state.Outcome()
		switch {
		case d.err != nil && d.logID == "":
			o = "refused"
		case o == "":
			o = "pending"
		}
		outcomes[o]++
		if d.reason != "" {
			reasons[o+" "+d.reason]++
		}
		if d.state != "" {
			states[d.state]++
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nOUTCOME\tDOCUMENTS")
	for _, o := range []string{"success", "rejected", "ignored", "deferred", "failed", "pending", "refused"} {
		if outcomes[o] > 0 || o == "success" || o == "failed" {
			fmt.Fprintf(tw, "%s\t%d\n", o, outcomes[o])
		}
	}
	if len(reasons) > 0 {
		fmt.Fprintln(tw, "\nOUTCOME REASON\tDOCUMENTS")
		for _, k := range slices.Sorted(maps.Keys(reasons)) {
			fmt.Fprintf(tw, "%s\t%d\n", k, reasons[k])
		}
	}
	fmt.Fprintln(tw, "\nSTATE\tDOCUMENTS")
	for _, s := range client.States {
		if states[s] > 0 {
			fmt.Fprintf(tw, "%s\t%d\n", s, states[s])
		}
	}
	_ = tw.Flush()
	printTemplates(w, docs)
	printFlags(w, docs) // upload_flags.go
	return printFailures(w, docs)
}

// printFailures lists the documents refused, failed or undecided with
// their log_ids; it reports whether there were any.
func printFailures(w io.Writer, docs []*uploadFile) bool {
	var bad []*uploadFile
	for _, d := range docs {
		if d.err != nil || d.state.Outcome() == "failed" {
			bad = append(bad, d)
		}
	}
	if len(bad) == 0 {
		return false
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nfailures:")
	fmt.Fprintln(tw, "LOG_ID\tSTATE\tFILE\tERROR")
	for _, d := range bad {
		e := "-"
		if d.err != nil {
			e = d.err.Error()
			var apiErr *client.Error
			if errors.As(d.err, &apiErr) {
				e = apiErr.Code + ": " + apiErr.Message
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", dash(d.logID), dash(string(d.state)), strings.Join(d.paths, ", "), e)
	}
	_ = tw.Flush()
	return true
}

// forEach runs fn on every item with n in flight.
func forEach[T any](items []T, n int, fn func(T)) {
	ch := make(chan T)
	var wg sync.WaitGroup
	for range min(n, len(items)) {
		wg.Go(func() {
			for it := range ch {
				fn(it)
			}
		})
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
}

// progress shows a bar on stderr when it is a terminal, with each item's
// line printed above it, and only the lines, on stdout, otherwise (logs and
// scripts).
type progress struct {
	mu       sync.Mutex
	env      Env
	tty      bool
	total, n int
	errs     int
	name     string
}

func newProgress(env Env, total int) *progress {
	tty := false
	if f, ok := env.Stderr.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{env: env, tty: tty, total: total}
}

func (p *progress) phase(name string) {
	p.name = name
	p.paint()
}

func (p *progress) done(line string, problem bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if problem {
		p.errs++
	}
	if line == "" { // counted only: the caller reported it
		p.paint()
		return
	}
	if !p.tty {
		fmt.Fprintln(p.env.Stdout, line)
		return
	}
	// The line goes above the bar, which is painted again below it.
	fmt.Fprintf(p.env.Stderr, "\r\033[K%s\n", line)
	p.paint()
}

func (p *progress) paint() {
	if !p.tty {
		return
	}
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = p.n * width / p.total
	}
	fmt.Fprintf(p.env.Stderr, "\r\033[K%-6s [%s%s] %d/%d", p.name, strings.Repeat("#", filled),
		strings.Repeat(".", width-filled), p.n, p.total)
	if p.errs > 0 {
		fmt.Fprintf(p.env.Stderr, "  %d problems", p.errs)
	}
}

func (p *progress) finish() {
	if p.tty {
		fmt.Fprintln(p.env.Stderr)
	}
}
