package chaos

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/docintake/docintake/pkg/objectstore"
)

type row struct {
	logID, clientID, messageID, state              string
	sourceKey, resultKey, resultJSONKey, reasonStr string
	processSeq, failures                           int
}

// expectedStatus is the webhook status a document's final state reports
// ("" when no call is due).
func expectedStatus(state string) string {
	switch state {
	case "finished_success":
		return "success"
	case "finished_rejected":
		return "rejected"
	case "dlq":
		return "failed"
	}
	return ""
}

// atRest reports whether state is an acceptable end for an upload of kind.
func atRest(kind, state string) bool {
	switch state {
	case "finished_success", "finished_rejected", "finished_ignored":
		return true
	case "dlq":
		return kind == kindMalformed
	}
	return false
}

func (h *harness) verify(ctx context.Context, ups []*upload) error {
	rep := h.report
	rows := map[string]row{} // client_id/message_id → row
	byLog := map[string]row{}
	r, err := h.pool.Query(ctx, `SELECT log_id, client_id, message_id, state, source_key,
		coalesce(result_key, ''), coalesce(result_json_key, ''), coalesce(status_reason, ''), process_seq, failures FROM documents`)
	if err != nil {
		return fmt.Errorf("read documents: %w", err)
	}
	for r.Next() {
		var x row
		if err := r.Scan(&x.logID, &x.clientID, &x.messageID, &x.state, &x.sourceKey, &x.resultKey, &x.resultJSONKey,
			&x.reasonStr, &x.processSeq, &x.failures); err != nil {
			return err
		}
		rows[x.clientID+"/"+x.messageID] = x
		byLog[x.logID] = x
	}
	if err := r.Err(); err != nil {
		return err
	}

	// 1. Every upload got a definite answer: 202, or 415 for a file that
	// does not start with %PDF-.
	var unanswered, accepted, replayed int
	var bad []string
	for _, up := range ups {
		want := http.StatusAccepted
		if !bytes.HasPrefix(up.data, []byte("%PDF-")) {
			want = http.StatusUnsupportedMediaType
		}
		if up.status == http.StatusAccepted {
			accepted++
			if len(up.logIDs) > 1 {
				replayed++
			}
		}
		if up.status != want {
			unanswered++
			bad = appendMax(bad, fmt.Sprintf("%s (%s): got %d after %d attempts, last error %s", up.messageID, up.name, up.status, up.attempts, up.lastErr))
		}
	}
	rep.check("uploads-answered", unanswered == 0, "%d/%d uploads got their expected answer (%d accepted)%s", len(ups)-unanswered, len(ups), accepted, list(bad))

	// 2. One log_id per message_id, 3. exactly one row per 202, 4. at rest.
	var split, missing, moving int
	var splitEx, missingEx, movingEx []string
	states := map[string]int{}
	for _, up := range ups {
		if up.status != http.StatusAccepted {
			continue
		}
		for _, id := range up.logIDs {
			if id != up.logIDs[0] {
				split++
				splitEx = appendMax(splitEx, fmt.Sprintf("%s: %v", up.messageID, up.logIDs))
				break
			}
		}
		x, ok := rows[up.tenant+"/"+up.messageID]
		if !ok || x.logID != up.logIDs[0] {
			missing++
			missingEx = appendMax(missingEx, fmt.Sprintf("%s: 202 log_id %s, row %q", up.messageID, up.logIDs[0], x.logID))
			continue
		}
		states[up.kind+":"+x.state]++
		if !atRest(up.kind, x.state) {
			moving++
			movingEx = appendMax(movingEx, fmt.Sprintf("%s %s (%s): %s %s", x.logID, up.messageID, up.name, x.state, x.reasonStr))
		}
	}
	rep.check("one-log-id-per-message", split == 0, "%d message_ids answered with more than one log_id%s", split, list(splitEx))
	rep.check("one-row-per-202", missing == 0, "%d/%d accepted uploads have exactly their document row%s", accepted-missing, accepted, list(missingEx))
	rep.check("at-rest", moving == 0, "%d accepted documents not finished_* (or dlq when malformed)%s", moving, list(movingEx))
	rep.figure("end states by kind: %s", sortedCounts(states))
	rep.figure("rows without a 202 (response lost, client gave up): %d", len(rows)-accepted+missing)
	rep.figure("uploads answered 202 more than once (retried after a lost answer): %d", replayed)

	// 5. Every outcome reached the receiver; 6. one webhook-id per outcome;
	// 7. deliveries only to the owning tenant.
	got, _ := h.recv.snapshot()
	byOutcome := map[string]map[string]int{} // log_id/status → webhook-id → copies
	var foreign []string
	for _, d := range got {
		key := d.LogID + "/" + d.Status
		if byOutcome[key] == nil {
			byOutcome[key] = map[string]int{}
		}
		byOutcome[key][d.WebhookID]++
		if x, ok := byLog[d.LogID]; !ok || x.clientID != d.Tenant {
			foreign = appendMax(foreign, fmt.Sprintf("%s %s to %s (owner %q)", d.LogID, d.Status, d.Tenant, x.clientID))
		}
	}
	var undelivered, multiID, duplicates, failedFinal int
	var undeliveredEx, multiIDEx []string
	for _, x := range byLog {
		if x.state == "finished_with_failure" {
			failedFinal++
		}
		want := expectedStatus(x.state)
		if want == "" {
			continue
		}
		if len(byOutcome[x.logID+"/"+want]) == 0 {
			undelivered++
			undeliveredEx = appendMax(undeliveredEx, fmt.Sprintf("%s %s (%s)", x.logID, want, x.state))
		}
	}
	for key, ids := range byOutcome {
		for _, n := range ids {
			duplicates += n - 1
		}
		if len(ids) > 1 && !strings.HasSuffix(key, "/deferred_for_retry") {
			multiID++
			multiIDEx = appendMax(multiIDEx, fmt.Sprintf("%s: %d webhook-ids", key, len(ids)))
		}
	}
	rep.check("outcome-delivered", undelivered == 0 && failedFinal == 0,
		"%d outcomes never reached the receiver, %d documents finished_with_failure%s", undelivered, failedFinal, list(undeliveredEx))
	rep.check("one-webhook-id-per-outcome", multiID == 0, "%d outcomes arrived under more than one webhook-id%s", multiID, list(multiIDEx))
	h.recv.mu.Lock()
	forged, refused, forgeries := h.recv.forged, h.recv.refused, h.recv.forgeries
	h.recv.mu.Unlock()
	rep.check("deliveries-scoped-signed", len(foreign) == 0 && forged == 0,
		"%d deliveries to a tenant that does not own the document, %d calls with a wrong token or signature%s",
		len(foreign), forged, list(append(foreign, forgeries...)))
	rep.figure("webhook copies accepted %d, duplicate copies (same webhook-id again) %d, calls refused with 503 on purpose %d",
		len(got), duplicates, refused)
	var attempts, deliveries, dupRows int
	if err := h.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM delivery_attempts), (SELECT count(*) FROM deliveries),
		(SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE status <> 'deferred_for_retry' AND redelivery_of IS NULL
			GROUP BY document_id, status HAVING count(*) > 1) d)`).Scan(&attempts, &deliveries, &dupRows); err != nil {
		return fmt.Errorf("read deliveries: %w", err)
	}
	rep.check("one-delivery-row-per-outcome", dupRows == 0, "%d outcomes have more than one delivery row", dupRows)
	var reprocessed, failuresTotal int
	for _, x := range byLog {
		if x.processSeq > 1 {
			reprocessed++
		}
		failuresTotal += x.failures
	}
	rep.figure("webhook attempts %d for %d deliveries (%d redelivery attempts); documents re-enqueued by the sweeper %d; extraction failures recorded %d",
		attempts, deliveries, attempts-deliveries, reprocessed, failuresTotal)
	// Every job the sweeper re-enqueued, once per sweep: a healthy job it
	// mistook for lost shows here as a process re-enqueue.
	var sweptProcess, sweptDeliver int
	if err := h.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE detail LIKE 're-enqueued as process job%'),
		count(*) FILTER (WHERE detail LIKE 'deliver job re-enqueued%') FROM document_events WHERE actor = 'sweeper'`).Scan(
		&sweptProcess, &sweptDeliver); err != nil {
		return fmt.Errorf("read sweeper events: %w", err)
	}
	rep.figure("sweeper re-enqueues: process jobs %d, deliver jobs %d", sweptProcess, sweptDeliver)

	// 8. No document row without its objects.
	if err := h.checkObjects(ctx, byLog); err != nil {
		return err
	}

	// 9. Secrets never logged; 10. no crash in any service.
	h.checkLogs()
	var starts, unexpected []string
	for _, s := range h.svcs {
		s.mu.Lock()
		starts = append(starts, fmt.Sprintf("%s=%d", s.p.Name, s.starts))
		if s.unexpected > 0 {
			unexpected = append(unexpected, fmt.Sprintf("%s=%d", s.p.Name, s.unexpected))
		}
		s.mu.Unlock()
	}
	rep.figure("service starts: %s; exits not caused by the harness (start-up while a dependency was down): %s",
		strings.Join(starts, " "), strings.Join(append(unexpected, ""), " "))
	return nil
}

func (h *harness) checkObjects(ctx context.Context, byLog map[string]row) error {
	st, err := objectstore.NewS3(objectstore.S3Config{Endpoint: h.s3URL, Region: "us-east-1", Bucket: "chaos",
		AccessKey: "chaos", SecretKey: "chaossecret", PathStyle: true})
	if err != nil {
		return err
	}
	var checked, absent int
	var absentEx []string
	known := map[string]bool{}
	for _, x := range byLog {
		for _, key := range []string{x.sourceKey, x.resultKey, x.resultJSONKey} {
			if key == "" {
				continue
			}
			known[key] = true
			checked++
			if _, err := st.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("chaos"), Key: aws.String(key)}); err != nil {
				absent++
				absentEx = appendMax(absentEx, fmt.Sprintf("%s: %s (%v)", x.logID, key, err))
			}
		}
	}
	h.report.check("objects-present", absent == 0, "%d/%d objects named by document rows exist%s", checked-absent, checked, list(absentEx))
	orphans := 0
	pages := s3.NewListObjectsV2Paginator(st.Client(), &s3.ListObjectsV2Input{Bucket: aws.String("chaos"), Prefix: aws.String("sources/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list objects: %w", err)
		}
		for _, o := range page.Contents {
			if !known[aws.ToString(o.Key)] {
				orphans++
			}
		}
	}
	h.report.figure("source objects without a row (upload killed between PutObject and commit): %d", orphans)
	return nil
}

// checkLogs greps every process's log for the run's secrets and for
// crashes. The services log at the configured level; the short run in
// `make test` uses debug, the most talkative.
func (h *harness) checkLogs() {
	var secrets []string
	for _, t := range h.tenants {
		secrets = append(secrets, t.token, t.webhookToken, t.signingSecret, strings.TrimPrefix(t.signingSecret, "whsec_"))
	}
	secrets = append(secrets, "chaossecret")
	crashMarks := []string{"panic:", "fatal error:", "panic in handler", "DATA RACE"}
	var leaks, crashes []string
	var scanned int64
	files, _ := filepath.Glob(filepath.Join(h.logDir, "*.log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			leaks = append(leaks, err.Error())
			continue
		}
		scanned += int64(len(b))
		name := filepath.Base(f)
		for _, s := range secrets {
			if s == "chaossecret" && name == "versitygw.log" {
				continue // the gateway's own credential
			}
			if bytes.Contains(b, []byte(s)) {
				leaks = appendMax(leaks, fmt.Sprintf("%s contains a secret (%.14s…)", name, s))
			}
		}
		if name == "postgres.log" || name == "nats-server.log" || name == "versitygw.log" {
			continue
		}
		for _, m := range crashMarks {
			if i := bytes.Index(b, []byte(m)); i >= 0 {
				end := min(len(b), i+200)
				crashes = appendMax(crashes, fmt.Sprintf("%s: %q", name, b[i:end]))
			}
		}
	}
	h.report.check("no-secrets-in-logs", len(leaks) == 0, "%d secrets (access tokens, webhook tokens, signing secrets, S3 key) in %d log files, %d KiB%s",
		len(leaks), len(files), scanned>>10, list(leaks))
	h.report.check("no-crashes", len(crashes) == 0, "%d panics or fatal errors in the service logs%s", len(crashes), list(crashes))
}

func appendMax(s []string, v string) []string {
	if len(s) < 5 {
		return append(s, v)
	}
	return s
}

func list(ex []string) string {
	if len(ex) == 0 {
		return ""
	}
	return "; e.g. " + strings.Join(ex, " | ")
}

func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
