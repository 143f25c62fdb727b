package mailintake_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/mailintake"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// The day replayed; mails arrive at its noon (UTC), so every time zone
// sees them on that day.
var day = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func (e env) deps(t *testing.T) mailintake.Deps {
	return mailintake.Deps{Mailboxes: []mailbox.Mailbox{e.mb}, Store: e.st, Intake: e.svc, Logger: zaptest.NewLogger(t), Tuning: e.tune}
}

// readDeps are deps's for pkg/mailbox's operator commands (Replay).
func (e env) readDeps(t *testing.T) mailbox.Deps {
	return mailbox.Deps{Store: e.st, Intake: e.svc, Logger: zaptest.NewLogger(t), Tuning: e.tune.Read}
}

// A day of mail replayed after an outage: a mail the intake processed
// (its document exists) is skipped; one moved to the processed folder by
// hand while the intake was down, and one an outage sent to the error
// folder, get their documents, and the latter moves to the processed
// folder; a mail without a PDF is reported and stays; a mail of another
// day is not read. A dry run makes and moves nothing; a second replay
// makes nothing (exactly once).
func TestReplayADay(t *testing.T) {
	e := setup(t)
	e.dc.AppendAt(t, "INBOX", mailBytes("jane@buyer.example", "x@buyer.example", "X", part{"application/pdf", "x.pdf", pdfBytes("x")}), day)
	passErr, _ := e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	objects := e.svc.Objects
	e.svc.Objects, e.tune = failingObjects{objects}, mailintake.Tuning{Read: mailbox.Tuning{MaxFailures: 1}}
	e.dc.AppendAt(t, "INBOX", mailBytes("jane@buyer.example", "z@buyer.example", "Z", part{"application/pdf", "z.pdf", pdfBytes("z")}), day)
	passErr, _ = e.pass(t, mailintake.Hooks{})
	require.NoError(t, passErr)
	require.Equal(t, 1, e.dc.count(t, "Not processed"), "the outage sent Z to the error folder")
	e.svc.Objects = objects
	e.dc.AppendAt(t, "Processed", mailBytes("po@other.example", "y@other.example", "Y", part{"application/pdf", "y.pdf", pdfBytes("y")}), day)
	e.dc.AppendAt(t, "Not processed", mailBytes("jane@buyer.example", "w@buyer.example", "W"), day)
	e.dc.AppendAt(t, "Processed", mailBytes("jane@buyer.example", "v@buyer.example", "V", part{"application/pdf", "v.pdf", pdfBytes("v")}), day.AddDate(0, 0, -1))

	d := e.readDeps(t)
	rep, err := mailbox.Replay(t.Context(), d, e.mb, mailbox.ReplayOptions{Since: day, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, [5]int{2, 1, 0, 1, 0}, [5]int{rep.Created, rep.Existing, rep.Refused, rep.WithoutDocuments, rep.MovedMail})
	require.Equal(t, []string{"x@buyer.example#1"}, keys(e.documents(t)), "a dry run makes nothing")
	require.Equal(t, 2, e.dc.count(t, "Not processed"), "a dry run moves nothing")

	rep, err = mailbox.Replay(t.Context(), d, e.mb, mailbox.ReplayOptions{Since: day})
	require.NoError(t, err)
	require.Equal(t, [5]int{2, 1, 0, 1, 1}, [5]int{rep.Created, rep.Existing, rep.Refused, rep.WithoutDocuments, rep.MovedMail})
	byID := map[string]mailbox.ReplayMail{}
	for _, m := range rep.Mails {
		byID[m.MessageID] = m
	}
	require.Equal(t, []string{"x@buyer.example#1"}, byID["x@buyer.example"].Existing)
	require.Equal(t, []string{"y@other.example#1"}, byID["y@other.example"].Created)
	require.Equal(t, "Processed", byID["z@buyer.example"].MovedTo)
	require.Contains(t, byID["w@buyer.example"].Problem, "no_pdf: no PDF attachment")
	require.True(t, byID["x@buyer.example"].Arrived.Equal(day), "arrived %v", byID["x@buyer.example"].Arrived)
	require.NotContains(t, byID, "v@buyer.example", "the day before is not replayed")
	require.Equal(t, map[string]string{
		"x@buyer.example#1": "x.pdf | X | CONTOSO",
		"y@other.example#1": "y.pdf | Y | OTHER",
		"z@buyer.example#1": "z.pdf | Z | CONTOSO",
	}, e.documents(t))
	require.Equal(t, 1, e.dc.count(t, "Not processed"))
	require.Equal(t, 4, e.dc.count(t, "Processed"))

	rep, err = mailbox.Replay(t.Context(), d, e.mb, mailbox.ReplayOptions{Since: day.AddDate(0, 0, -1), Until: day})
	require.NoError(t, err)
	require.Equal(t, [3]int{1, 3, 0}, [3]int{rep.Created, rep.Existing, rep.MovedMail}, "only the day before's V is new")
	require.Len(t, e.documents(t), 4)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// gauge returns a series' value and whether it is there.
func gauge(t *testing.T, reg *prometheus.Registry, name string) (float64, bool) {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelOf(m, "mailbox") == "orders-acme" {
				if m.GetCounter() != nil {
					return m.GetCounter().GetValue(), true
				}
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// A pass that cannot finish a mail (the object store is down) reports the
// mailbox failing with the mail unprocessed since its arrival, in the
// health row and as metrics; the next good pass reports it healthy.
func TestMailboxHealth(t *testing.T) {
	e := setup(t)
	e.dc.AppendAt(t, "INBOX", mailBytes("jane@buyer.example", "h@buyer.example", "H", part{"application/pdf", "h.pdf", pdfBytes("h")}), day)
	objects := e.svc.Objects
	e.svc.Objects = failingObjects{objects}
	d, reg := e.deps(t), prometheus.NewRegistry()
	d.Registry = reg
	require.NoError(t, runFor(t, d, func() bool { return true }))

	st := mailboxStatus(t, e)
	require.Equal(t, "failing", st.Health())
	require.Equal(t, 1, st.FailedPasses)
	require.Contains(t, st.LastError, "object store unavailable")
	require.Equal(t, 1, st.Unprocessed)
	require.True(t, st.OldestUnprocessed.Equal(day), "oldest unprocessed %v", st.OldestUnprocessed)
	require.Equal(t, 1, st.Retrying)
	require.True(t, st.LastSuccessAt.IsZero())
	lower := time.Since(day).Seconds()
	age, ok := gauge(t, reg, "docintake_mailintake_oldest_unprocessed_age_seconds")
	require.True(t, ok)
	require.GreaterOrEqual(t, age, lower)
	require.LessOrEqual(t, age, time.Since(day).Seconds())
	for name, want := range map[string]float64{"docintake_mailintake_unprocessed_mails": 1, "docintake_mailintake_mails_seen_total": 1,
		"docintake_mailintake_failed_passes": 1} {
		v, ok := gauge(t, reg, name)
		require.True(t, ok, name)
		require.Equal(t, want, v, name)
	}
	_, ok = gauge(t, reg, "docintake_mailintake_last_success_timestamp_seconds")
	require.False(t, ok, "no pass succeeded yet")

	e.svc.Objects = objects
	d, reg = e.deps(t), prometheus.NewRegistry()
	d.Registry = reg
	require.NoError(t, runFor(t, d, func() bool { return true }))
	st = mailboxStatus(t, e)
	require.Equal(t, "ok", st.Health())
	require.Equal(t, [5]int{0, 0, 1, 1, 1}, [5]int{st.FailedPasses, st.Unprocessed, st.Seen, st.Processed, st.DocumentsCreated})
	require.True(t, st.OldestUnprocessed.IsZero())
	require.False(t, st.LastSuccessAt.IsZero())
	age, _ = gauge(t, reg, "docintake_mailintake_oldest_unprocessed_age_seconds")
	require.Zero(t, age)
	failed, ok := gauge(t, reg, "docintake_mailintake_failed_passes")
	require.True(t, ok)
	require.Zero(t, failed)
	last, ok := gauge(t, reg, "docintake_mailintake_last_success_timestamp_seconds")
	require.True(t, ok)
	require.Positive(t, last)
}

func mailboxStatus(t *testing.T, e env) store.MailboxStatus {
	t.Helper()
	all, err := e.st.MailboxStatuses(t.Context(), nil, 24*time.Hour)
	require.NoError(t, err)
	require.Len(t, all, 1)
	return all[0]
}

// With Deps.Load the intake follows the mailboxes table: a mailbox saved
// while it runs is read, one removed is let go (its lock released), and a
// stored entry it cannot read stops only itself.
func TestMailboxesFollowTable(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	require.NoError(t, e.st.UpsertMailboxConfig(ctx, store.MailboxConfig{ID: "broken", ClientID: "acme",
		Config: "id: broken\nclient: acme\nimap: {host: 127.0.0.1, no_such_setting: 1}\n", Source: store.MailboxFromCLI}))
	d := e.deps(t)
	d.Mailboxes, d.Load, d.Tuning = nil, mailintake.StoredMailboxes(e.st), mailintake.Tuning{PollInterval: 100 * time.Millisecond}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mailintake.Run(runCtx, d) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	require.NoError(t, mailbox.SaveMailbox(ctx, e.st, e.mb, store.MailboxFromCLI))
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "t@buyer.example", "T", part{"application/pdf", "t.pdf", pdfBytes("t")}))
	require.Eventually(t, func() bool { return len(e.documents(t)) == 1 }, time.Minute, 20*time.Millisecond,
		"the mailbox saved while the intake runs is read")

	require.NoError(t, e.st.DeleteMailboxConfig(ctx, e.mb.ID))
	require.Eventually(t, func() bool {
		l, ok, err := e.st.TryMailboxLock(ctx, e.mb.ID)
		require.NoError(t, err)
		if ok {
			l.Release()
		}
		return ok
	}, time.Minute, 20*time.Millisecond, "the removed mailbox's poller lets its lock go")
}

// Check logs in and looks at the folders without making any; a wrong
// password is an error that names neither password.
func TestCheckMailbox(t *testing.T) {
	e := setup(t)
	e.dc.appendMail(t, "INBOX", mailBytes("jane@buyer.example", "c@buyer.example", "C", part{"application/pdf", "c.pdf", pdfBytes("c")}))
	rep, err := mailbox.Check(t.Context(), e.mb, os.Getenv)
	require.NoError(t, err)
	require.True(t, rep.OK())
	require.Equal(t, []mailbox.CheckFolder{
		{Role: "folder", Name: "INBOX", Exists: true, Messages: 1, Unseen: 1},
		{Role: "processed_folder", Name: "Processed"},
		{Role: "error_folder", Name: "Not processed"},
	}, rep.Folders)
	rep, err = mailbox.Check(t.Context(), e.mb, os.Getenv)
	require.NoError(t, err)
	require.False(t, rep.Folders[1].Exists, "checking made no folder")

	mb := e.mb
	mb.Folder = "Orders"
	rep, err = mailbox.Check(t.Context(), mb, os.Getenv)
	require.NoError(t, err)
	require.False(t, rep.OK(), "the folder read does not exist")

	wrong := filepath.Join(t.TempDir(), "wrong")
	require.NoError(t, os.WriteFile(wrong, []byte("not-the-password-42"), 0o600))
	mb = e.mb
	mb.IMAP.PasswordFile = wrong
	_, err = mailbox.Check(t.Context(), mb, os.Getenv)
	require.ErrorContains(t, err, "imap login")
	require.NotContains(t, err.Error(), "not-the-password-42")
	require.NotContains(t, err.Error(), e.dc.Password)
}
