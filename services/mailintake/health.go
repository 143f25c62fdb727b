package mailintake

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// health is what the pollers report of their mailboxes beyond the
// counters of metrics.go: after every pass its outcome, the mails left in
// the folder and the arrival of the oldest, as Prometheus series and in
// the mailbox's mailbox_health row (which `intakectl status` and the ops
// console read, since they do not reach the pollers' /metrics).
type health struct {
	st          *store.Store
	reader      string // this process, as the health row names it
	seen        *prometheus.CounterVec
	unprocessed *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
	failing     *prometheus.GaugeVec
	oldestDesc  *prometheus.Desc

	mu     sync.Mutex
	oldest map[string]time.Time // by mailbox: arrival of the oldest unprocessed mail, zero when none
}

func newHealth(reg *prometheus.Registry, st *store.Store) *health {
	host, _ := os.Hostname()
	h := &health{st: st, reader: fmt.Sprintf("%s:%d", host, os.Getpid()), oldest: map[string]time.Time{},
		seen: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docintake_mailintake_mails_seen_total",
			Help: "Mails listed in a mailbox's folder for the first time by this process, by mailbox."}, []string{"mailbox"}),
		unprocessed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "docintake_mailintake_unprocessed_mails",
			Help: "Mails left in the mailbox's folder after the last pass (on the replica reading it)."}, []string{"mailbox"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "docintake_mailintake_last_success_timestamp_seconds",
			Help: "Unix time of the last pass over the mailbox that read every mail it could (on the replica reading it)."}, []string{"mailbox"}),
		failing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "docintake_mailintake_failed_passes",
			Help: "Passes over the mailbox that failed in a row (login, server, database), 0 after a good one (on the replica reading it)."}, []string{"mailbox"}),
		oldestDesc: prometheus.NewDesc("docintake_mailintake_oldest_unprocessed_age_seconds",
			"Age of the oldest mail left in the mailbox's folder (its arrival at the server), 0 when none; grows while passes fail.",
			[]string{"mailbox"}, nil),
	}
	if reg != nil {
		reg.MustRegister(h.seen, h.unprocessed, h.lastSuccess, h.failing, h)
	}
	return h
}

// Describe and Collect make the oldest mail's age a gauge computed at each
// scrape, so it keeps growing while the server or the database is down.
func (h *health) Describe(ch chan<- *prometheus.Desc) { ch <- h.oldestDesc }

func (h *health) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	for id, t := range h.oldest {
		age := 0.0
		if !t.IsZero() {
			age = max(now.Sub(t).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(h.oldestDesc, prometheus.GaugeValue, age, id)
	}
}

// forget drops a removed mailbox's gauges.
func (h *health) forget(id string) {
	h.unprocessed.DeleteLabelValues(id)
	h.lastSuccess.DeleteLabelValues(id)
	h.failing.DeleteLabelValues(id)
	h.mu.Lock()
	delete(h.oldest, id)
	h.mu.Unlock()
}

// mailboxHealth is one poller's view: the mails it listed and has not
// finished, with their arrival.
type mailboxHealth struct {
	h           *health
	mb          mailbox.Mailbox
	log         *zap.Logger
	uidValidity uint32
	pending     map[uint32]time.Time
	failed      int // passes in a row
}

func (h *health) of(mb mailbox.Mailbox, log *zap.Logger) *mailboxHealth {
	return &mailboxHealth{h: h, mb: mb, log: log, pending: map[uint32]time.Time{}}
}

// arrivalSource is a session that can tell when mails arrived (IMAP's
// INTERNALDATE); for others the time a mail is first listed stands in.
type arrivalSource interface {
	Arrivals(ctx context.Context, uids []uint32) (map[uint32]time.Time, error)
}

// listed notes the mails a pass is about to read. A nil mailboxHealth
// reports nothing.
func (mh *mailboxHealth) listed(ctx context.Context, s mailbox.Session, uidValidity uint32, uids []uint32) {
	if mh == nil {
		return
	}
	if uidValidity != mh.uidValidity {
		mh.uidValidity, mh.pending = uidValidity, map[uint32]time.Time{}
	}
	listed := make(map[uint32]bool, len(uids))
	var fresh []uint32
	for _, u := range uids {
		listed[u] = true
		if _, ok := mh.pending[u]; !ok {
			fresh = append(fresh, u)
		}
	}
	for u := range mh.pending {
		if !listed[u] {
			delete(mh.pending, u) // moved away by someone else
		}
	}
	if len(fresh) == 0 {
		return
	}
	mh.h.seen.WithLabelValues(mh.mb.ID).Add(float64(len(fresh)))
	var at map[uint32]time.Time
	if a, ok := s.(arrivalSource); ok {
		var err error
		if at, err = a.Arrivals(ctx, fresh); err != nil {
			mh.log.Warn("reading the mails' arrival", zap.Error(err))
		}
	}
	now := time.Now()
	for _, u := range fresh {
		if t, ok := at[u]; ok && !t.IsZero() {
			mh.pending[u] = t
		} else {
			mh.pending[u] = now
		}
	}
}

// finished notes a mail moved out of the folder.
func (mh *mailboxHealth) finished(uid uint32) {
	if mh != nil {
		delete(mh.pending, uid)
	}
}

// passed records a pass's outcome; err is nil for a pass that read every
// mail it could.
func (mh *mailboxHealth) passed(ctx context.Context, err error) {
	if mh == nil || err != nil && ctx.Err() != nil {
		return // stopped, not failed
	}
	var oldest time.Time
	for _, t := range mh.pending {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	id := mh.mb.ID
	mh.h.unprocessed.WithLabelValues(id).Set(float64(len(mh.pending)))
	mh.h.mu.Lock()
	mh.h.oldest[id] = oldest
	mh.h.mu.Unlock()
	p := store.MailboxPass{MailboxID: id, ClientID: mh.mb.Client, Reader: mh.h.reader,
		Unprocessed: len(mh.pending), OldestUnprocessed: oldest}
	if err != nil {
		p.Err = err.Error()
		mh.failed++
	} else {
		mh.failed = 0
		mh.h.lastSuccess.WithLabelValues(id).SetToCurrentTime()
	}
	mh.h.failing.WithLabelValues(id).Set(float64(mh.failed))
	// Written even after ctx ended (the pass's own last word), bounded.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if werr := mh.h.st.RecordMailboxPass(wctx, p); werr != nil {
		mh.log.Warn("recording the mailbox's health", zap.Error(werr))
	}
}
