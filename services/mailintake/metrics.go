package mailintake

import "github.com/prometheus/client_golang/prometheus"

// metrics are the mailbox intake's Prometheus series, by mailbox id (the
// configured ones: a bounded set).
type metrics struct {
	mails     *prometheus.CounterVec // by mailbox and outcome
	documents *prometheus.CounterVec // by mailbox and outcome
	errors    *prometheus.CounterVec // by mailbox and kind
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		mails: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docintake_mailintake_mails_total",
			Help: "Mails finished, by mailbox and outcome (processed: moved to the processed folder; failed: moved to the error folder)."},
			[]string{"mailbox", "outcome"}),
		documents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docintake_mailintake_documents_total",
			Help: "PDF attachments submitted, by mailbox and outcome (created, replayed: the document of an earlier read, refused)."},
			[]string{"mailbox", "outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "docintake_mailintake_errors_total",
			Help: "Errors by mailbox and kind (no_pdf, malformed, too_large, refused, retry, server)."},
			[]string{"mailbox", "kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.mails, m.documents, m.errors)
	}
	return m
}

// Mail, Document and Error count for the mailbox's reader (mailbox.Counter).
func (m *metrics) Mail(mailboxID, outcome string) { m.mails.WithLabelValues(mailboxID, outcome).Inc() }

func (m *metrics) Document(mailboxID, outcome string) {
	m.documents.WithLabelValues(mailboxID, outcome).Inc()
}

func (m *metrics) Error(mailboxID, kind string) { m.errors.WithLabelValues(mailboxID, kind).Inc() }
