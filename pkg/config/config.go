// Package config reads docintake's configuration from the environment, in one
// place. Every variable has a default, a meaning and a parser in Vars; that
// list renders the README table and `intakectl config print`, so the
// documentation cannot drift from the code.
package config

import (
	"fmt"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docintake/docintake/pkg/jobs"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/queue"
	"github.com/docintake/docintake/pkg/webhook"
)

// Config is the whole system's configuration; each service uses its part.
type Config struct {
	HTTPAddr       string
	BasePath       string
	MetricsAddr    string
	DatabaseURL    string
	NATSURL        string
	NATSListen     string
	DataDir        string
	Stream         string
	StreamReplicas int
	SubjectPrefix  string
	S3             S3
	ClientsFile    string
	MailboxesFile  string
	TemplatesDir   string
	// TemplateBudget bounds one template run (one document, one sample):
	// template.RunOptions.Budget, set on the services' contexts with
	// template.WithBudget.
	TemplateBudget time.Duration
	MaxUploadBytes int64
	// UploadRateLimit is uploads per client per UploadRateWindow; 0: unlimited.
	UploadRateLimit  int
	UploadRateWindow time.Duration
	// TemplateLimits bound what one client may store through PUT
	// /templates (issue 25 finding 2).
	TemplateLimits TemplateLimits
	OpsToken       string
	OpsSessionTTL  time.Duration
	// OpsConsole serves the console for named operators without
	// OpsToken; OpsTrustedUserHeader and OpsTrustedProxies are the
	// identity-aware proxy's header and addresses (ingest.OpsConfig).
	OpsConsole           bool
	OpsTrustedUserHeader string
	OpsTrustedProxies    []netip.Prefix
	LogLevel             string
	ShutdownTimeout      time.Duration
	PprofAddr            string

	PDFEngine  string
	PDFTimeout time.Duration
	PDFWorkers int
	// PDFResidentBin is the resident engine's helper; empty: next to the
	// executable, then PATH.
	PDFResidentBin string
	// OCRPageTimeout bounds the OCR of one page (pdftext.Options.OCRPageTimeout).
	OCRPageTimeout time.Duration

	EmbeddedMaxCount int
	EmbeddedMaxBytes int64
	EmbeddedTimeout  time.Duration

	ProcessorConcurrency int
	// ProcessorClientConcurrency caps one client's documents in flight per
	// processor (0 = ProcessorConcurrency); ProcessorFairWindow is how many
	// jobs a processor holds ahead to take clients in turn.
	ProcessorClientConcurrency int
	ProcessorFairWindow        int
	// ClientShare (percent), ClientBurst (percent) and ClientCostHalfLife
	// share a processor's workers and PDF helpers between clients
	// (fairshare.Policy, built by Config.Fair).
	ClientShare            int
	ClientBurst            int
	ClientCostHalfLife     time.Duration
	ProcessorRetry         []time.Duration
	ProcessorMaxFailures   int
	ProcessorFailureDelay  time.Duration
	ProcessorAckWait       time.Duration
	ProcessorMaxAckPending int
	SweepInterval          time.Duration
	StuckAfter             time.Duration
	// OrphanGrace and OrphanInterval drive the processor's collection of
	// source objects no document refers to.
	OrphanGrace           time.Duration
	OrphanInterval        time.Duration
	WebhookTimeout        time.Duration
	WebhookRetry          []time.Duration
	WebhookAllowPrivate   bool
	WebhookConcurrency    int
	DispatcherConcurrency int

	// Tuning holds internal values that are no environment variable;
	// FromEnv sets them, so their defaults live here with the others.
	Tuning Tuning
}

// Tuning holds the internal timings and sizes of the services and libraries:
// not worth an environment variable. The services' values are written
// here; an adapter's (queue) are the adapter's own constants, which its
// options fall back to when left zero. A service setting left zero falls
// back to Defaults().Tuning.
type Tuning struct {
	// RelayBatchSize is the number of outbox rows one relay transaction
	// claims and publishes together.
	RelayBatchSize int
	// RelayPollInterval is how often a relay looks for rows nobody handed
	// it (committed by a process without a relay or that died, or left by
	// a failed publish).
	RelayPollInterval time.Duration
	// RelayPublishTimeout bounds the wait for a batch's JetStream acks.
	RelayPublishTimeout time.Duration
	// RelayClaimAge is how old an outbox row must be before a relay's poll
	// claims it: younger rows were handed to the relay of the process that
	// wrote them, which publishes them within milliseconds.
	RelayClaimAge time.Duration
	// RelayDeleteDelay is how long a relay gathers the ids of hand-over
	// rows it published before deleting them in one statement.
	RelayDeleteDelay time.Duration
	// StreamDuplicates is the stream's Nats-Msg-Id dedup window; it must
	// cover the longest time between a publish and its row's deletion
	// (RelayDeleteDelay, or RelayClaimAge plus a poll when the relay that
	// published it died first).
	StreamDuplicates time.Duration
	// ConsumerMaxDeliver bounds deliveries per message of both consumers.
	ConsumerMaxDeliver int
	// DispatcherAckWait and DispatcherMaxAckPending configure the
	// dispatcher's consumer (the processor's are environment variables).
	DispatcherAckWait       time.Duration
	DispatcherMaxAckPending int
	// DispatcherPollInterval is how often the dispatcher looks for due
	// webhook retries.
	DispatcherPollInterval time.Duration
	// WebhookLeaseMargin is added to INTAKE_WEBHOOK_TIMEOUT for an
	// attempt's lease.
	WebhookLeaseMargin time.Duration
	// DeliveryBackstop is when a published deliver job that never arrived
	// is republished.
	DeliveryBackstop time.Duration
	// DispatcherBusyDelay is the nak delay of a job whose client has no
	// free webhook slot (±50% jitter).
	DispatcherBusyDelay time.Duration
	// DispatcherMetricsInterval is how often the dispatcher reads its
	// backlog gauges from PostgreSQL.
	DispatcherMetricsInterval time.Duration
	// ReadHeaderTimeout bounds the time an API client may take to send its
	// request headers (slowloris).
	ReadHeaderTimeout time.Duration
	// OpsRefresh is how often the ops console's pages reload themselves;
	// OpsDLQLimit is how many dlq documents its page lists.
	OpsRefresh  time.Duration
	OpsDLQLimit int
}

// defaultTuning is every Tuning default.
var defaultTuning = Tuning{
	RelayBatchSize:            queue.DefaultRelayBatchSize,
	RelayPollInterval:         queue.DefaultRelayPollInterval,
	RelayPublishTimeout:       queue.DefaultRelayPublishTimeout,
	RelayClaimAge:             queue.DefaultRelayClaimAge,
	RelayDeleteDelay:          queue.DefaultRelayDeleteDelay,
	StreamDuplicates:          queue.DefaultDuplicates,
	ConsumerMaxDeliver:        queue.DefaultMaxDeliver,
	DispatcherAckWait:         queue.DefaultDispatcherAckWait,
	DispatcherMaxAckPending:   queue.DefaultDispatcherMaxAckPending,
	DispatcherPollInterval:    time.Second,
	WebhookLeaseMargin:        5 * time.Second,
	DeliveryBackstop:          2 * time.Minute,
	DispatcherBusyDelay:       time.Second,
	DispatcherMetricsInterval: 10 * time.Second,
	ReadHeaderTimeout:         10 * time.Second,
	OpsRefresh:                10 * time.Second,
	OpsDLQLimit:               200,
}

// TemplateLimits bound one client's templates: a tenant's templates are
// compiled (about 50 bytes of memory per pattern byte, about 11 KiB per
// pattern) and their samples read by every replica, so their size is that
// tenant's cost to bound, not everyone's.
type TemplateLimits struct {
	// MaxBytes is the largest template file (YAML or JSON); larger: 413.
	MaxBytes int64
	// SamplesMaxBytes is the largest sum of one PUT's sample files; larger:
	// 413.
	SamplesMaxBytes int64
	// MaxCount is the most live templates a client may have; a new one
	// beyond it: 422.
	MaxCount int
	// MaxPatterns and MaxPatternBytes bound the regexes of one template
	// (their number, and the sum of their lengths); more: 422.
	MaxPatterns     int
	MaxPatternBytes int
	// ChangeRateLimit is template changes (PUT, DELETE) one client may make
	// per ChangeRateWindow; more: 429. 0: unlimited.
	ChangeRateLimit  int
	ChangeRateWindow time.Duration
}

// S3 configures the S3 object store. Endpoint "" means: no S3 (standalone
// uses the filesystem store under DataDir).
type S3 struct {
	Endpoint  string
	Region    string
	Bucket    string
	AccessKey string
	SecretKey string
	PathStyle bool
}

// Var is one environment variable.
type Var struct {
	Name    string
	Default string
	Doc     string
	set     func(c *Config, v string) error
}

func str(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func integer(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("must be a non-negative integer")
		}
		*dst(c) = n
		return nil
	}
}

func byteSize(dst func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("must be a positive number of bytes")
		}
		*dst(c) = n
		return nil
	}
}

func duration(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("must be a Go duration such as 20s")
		}
		*dst(c) = d
		return nil
	}
}

func boolean(dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("must be true or false")
		}
		*dst(c) = b
		return nil
	}
}

func schedule(dst func(*Config) *[]time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		s, err := ParseSchedule(v)
		if err != nil {
			return err
		}
		*dst(c) = s
		return nil
	}
}

// prefixes parses a comma-separated list of IP addresses (a one-address
// prefix) and CIDR prefixes.
func prefixes(dst func(*Config) *[]netip.Prefix) func(*Config, string) error {
	return func(c *Config, v string) error {
		out := []netip.Prefix{}
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if a, err := netip.ParseAddr(p); err == nil {
				out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
				continue
			}
			pf, err := netip.ParsePrefix(p)
			if err != nil {
				return fmt.Errorf("must be comma-separated IP addresses or CIDR prefixes, got %q", p)
			}
			out = append(out, pf.Masked())
		}
		*dst(c) = out
		return nil
	}
}

// ParseSchedule parses a comma-separated list of Go durations ("5s,5m,30m").
func ParseSchedule(v string) ([]time.Duration, error) {
	var out []time.Duration
	for _, p := range strings.Split(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("must be comma-separated positive Go durations, got %q", p)
		}
		out = append(out, d)
	}
	return out, nil
}

// Vars lists every variable, its default and meaning.
var Vars = []Var{
	{"INTAKE_HTTP_ADDR", "127.0.0.1:8080", "Address the ingest API listens on.", str(func(c *Config) *string { return &c.HTTPAddr })},
	{"INTAKE_BASE_PATH", "", "Path prefix of the client API (e.g. /api/v1); empty serves at the root.", str(func(c *Config) *string { return &c.BasePath })},
	{"INTAKE_METRICS_ADDR", "127.0.0.1:9090", "Address processor and dispatcher serve /healthz, /readyz and /metrics on (ingest serves them on INTAKE_HTTP_ADDR).", str(func(c *Config) *string { return &c.MetricsAddr })},
	{"INTAKE_DATABASE_URL", "", "PostgreSQL URL. Required for the separate services; standalone starts a private cluster when unset.", str(func(c *Config) *string { return &c.DatabaseURL })},
	{"INTAKE_NATS_URL", "nats://127.0.0.1:4222", "NATS JetStream URL of the separate services and intakectl.", str(func(c *Config) *string { return &c.NATSURL })},
	{"INTAKE_NATS_LISTEN", "127.0.0.1:4223", "Where standalone's embedded NATS server listens, so extra workers and intakectl can join (with the token standalone keeps in INTAKE_DATA_DIR/nats.token).", str(func(c *Config) *string { return &c.NATSListen })},
	{"INTAKE_DATA_DIR", "./.data", "Standalone's data: JetStream store, filesystem object store, private PostgreSQL cluster.", str(func(c *Config) *string { return &c.DataDir })},
	{"INTAKE_STREAM", queue.DefaultStream, "JetStream stream name.", str(func(c *Config) *string { return &c.Stream })},
	{"INTAKE_STREAM_REPLICAS", strconv.Itoa(queue.DefaultReplicas), "Copies of the stream in a NATS cluster (3 for production: R3 survives one node). Applied when the stream is created or updated at start.", integer(func(c *Config) *int { return &c.StreamReplicas })},
	{"INTAKE_SUBJECT_PREFIX", jobs.DefaultSubjectPrefix, "Subject prefix: jobs go to <prefix>.process.<client> and <prefix>.deliver.<client>.", str(func(c *Config) *string { return &c.SubjectPrefix })},
	{"INTAKE_S3_ENDPOINT", "", "S3 endpoint URL (e.g. http://127.0.0.1:7070). Empty: standalone stores objects under INTAKE_DATA_DIR/objects.", str(func(c *Config) *string { return &c.S3.Endpoint })},
	{"INTAKE_S3_REGION", objectstore.DefaultRegion, "S3 region.", str(func(c *Config) *string { return &c.S3.Region })},
	{"INTAKE_S3_BUCKET", "docintake", "S3 bucket for sources and results (created if missing).", str(func(c *Config) *string { return &c.S3.Bucket })},
	{"INTAKE_S3_ACCESS_KEY", "", "S3 access key id.", str(func(c *Config) *string { return &c.S3.AccessKey })},
	{"INTAKE_S3_SECRET_KEY", "", "S3 secret access key.", str(func(c *Config) *string { return &c.S3.SecretKey })},
	{"INTAKE_S3_PATH_STYLE", "true", "Use path-style S3 addressing (needed by most self-hosted S3 servers).", boolean(func(c *Config) *bool { return &c.S3.PathStyle })},
	{"INTAKE_CLIENTS_FILE", "", "YAML file of clients applied (upserted) at start; see README \"Adding a client\".", str(func(c *Config) *string { return &c.ClientsFile })},
	{"INTAKE_MAILBOXES_FILE", "", "YAML file of mailboxes applied (upserted) to the mailboxes table at start, like the clients file; the mail intake (bin/mailintake, make run) reads the table, which intakectl mailboxes edits too (see README \"Orders straight from the mailbox\"); empty: only the mailboxes added with intakectl.", str(func(c *Config) *string { return &c.MailboxesFile })},
	{"INTAKE_TEMPLATES_DIR", "./deploy/templates", "Directory of extraction templates (*.yml, *.yaml, *.json, recursive; NAME.samples/ folders are samples), synced into PostgreSQL at start: a new or changed file becomes a new global version.", str(func(c *Config) *string { return &c.TemplatesDir })},
	{"INTAKE_MAX_UPLOAD_BYTES", "26214400", "Largest accepted request body in bytes (25 MiB); larger uploads get 413.", byteSize(func(c *Config) *int64 { return &c.MaxUploadBytes })},
	{"INTAKE_UPLOAD_RATE_LIMIT", "0", "Uploads one client may make per INTAKE_UPLOAD_RATE_WINDOW, counted in PostgreSQL across all ingest replicas; a client's reprocess request and each PDF sample of its PUT /templates count as one upload. More get 429 rate_limited with Retry-After. 0 = unlimited.", integer(func(c *Config) *int { return &c.UploadRateLimit })},
	{"INTAKE_UPLOAD_RATE_WINDOW", "1m", "The fixed window of INTAKE_UPLOAD_RATE_LIMIT (a client may send up to twice the limit across a window boundary).", duration(func(c *Config) *time.Duration { return &c.UploadRateWindow })},
	{"INTAKE_TEMPLATE_BUDGET", "5s", "Time one template run may take on one document or sample (template choice, options, fields, lines, tables, rules; every regex search asks it first, a backtracking match never runs past it): the processor, PUT /templates sample checks, intakectl extract and templates test. A run over it stops: the document fails (after INTAKE_PROCESSOR_MAX_FAILURES attempts dlq) or the sample fails, with a reason naming the template and the time limit.", duration(func(c *Config) *time.Duration { return &c.TemplateBudget })},
	{"INTAKE_TEMPLATE_MAX_BYTES", "262144", "Largest template file a client may store with PUT /templates (256 KiB; the largest shipped template is 6 KB); larger get 413 template_too_large before the rest is read. Operators' templates (INTAKE_TEMPLATES_DIR, intakectl) are not limited.", byteSize(func(c *Config) *int64 { return &c.TemplateLimits.MaxBytes })},
	{"INTAKE_TEMPLATE_SAMPLES_MAX_BYTES", "10485760", "Largest sum of the sample files of one PUT /templates (10 MiB); more get 413 samples_too_large.", byteSize(func(c *Config) *int64 { return &c.TemplateLimits.SamplesMaxBytes })},
	{"INTAKE_TEMPLATE_MAX_COUNT", "50", "Templates one client may have (deleted ones do not count); a new one beyond it gets 422 template_limit_reached.", integer(func(c *Config) *int { return &c.TemplateLimits.MaxCount })},
	{"INTAKE_TEMPLATE_MAX_PATTERNS", "200", "Regexes in one client template (keywords, fields, lines, tables, replace, rules; the largest shipped template has 63); more get 422 template_too_many_patterns.", integer(func(c *Config) *int { return &c.TemplateLimits.MaxPatterns })},
	{"INTAKE_TEMPLATE_MAX_PATTERN_BYTES", "16384", "Sum of the lengths of one client template's regexes (16 KiB; the largest shipped template has 2.8 KB); more get 422 template_patterns_too_long. A compiled pattern holds about 50 times its length in memory.", integer(func(c *Config) *int { return &c.TemplateLimits.MaxPatternBytes })},
	{"INTAKE_TEMPLATE_CHANGE_RATE_LIMIT", "30", "Template changes (PUT, DELETE /templates/{name}, refused ones included) one client may make per INTAKE_TEMPLATE_CHANGE_RATE_WINDOW, counted in PostgreSQL across all ingest replicas; more get 429 rate_limited with Retry-After. 0 = unlimited.", integer(func(c *Config) *int { return &c.TemplateLimits.ChangeRateLimit })},
	{"INTAKE_TEMPLATE_CHANGE_RATE_WINDOW", "1h", "The fixed window of INTAKE_TEMPLATE_CHANGE_RATE_LIMIT (a client may make up to twice the limit across a window boundary).", duration(func(c *Config) *time.Duration { return &c.TemplateLimits.ChangeRateWindow })},
	{"INTAKE_OPS_TOKEN", "", "Shared bearer token of the ops console under /ops/ on the ingest port: the unnamed operator ops-console, of every client. Named operators (intakectl operators) log in with their own tokens instead. The console is served when this, INTAKE_OPS_CONSOLE or INTAKE_OPS_TRUSTED_USER_HEADER is set.", str(func(c *Config) *string { return &c.OpsToken })},
	{"INTAKE_OPS_CONSOLE", "false", "Serve the ops console for named operators (intakectl operators add) without a shared INTAKE_OPS_TOKEN.", boolean(func(c *Config) *bool { return &c.OpsConsole })},
	{"INTAKE_OPS_TRUSTED_USER_HEADER", "", "Header in which an identity-aware proxy in front of the console (oauth2-proxy: X-Forwarded-User) names the logged-in user, who must have an operator account; honoured only from INTAKE_OPS_TRUSTED_PROXIES. Empty: never read.", str(func(c *Config) *string { return &c.OpsTrustedUserHeader })},
	{"INTAKE_OPS_TRUSTED_PROXIES", "127.0.0.1/32,::1/128", "Addresses or CIDR prefixes (comma-separated) whose connections may name the user in INTAKE_OPS_TRUSTED_USER_HEADER; the TCP peer counts, never X-Forwarded-For.", prefixes(func(c *Config) *[]netip.Prefix { return &c.OpsTrustedProxies })},
	{"INTAKE_OPS_SESSION_TTL", "12h", "How long an ops console login lasts; sessions are kept in PostgreSQL, logout revokes one, changing INTAKE_OPS_TOKEN ends all its sessions, rotating or removing an operator ends the operator's.", duration(func(c *Config) *time.Duration { return &c.OpsSessionTTL })},
	{"INTAKE_LOG_LEVEL", "info", "Log level: debug, info, warn, error. Logs are JSON on stderr.", str(func(c *Config) *string { return &c.LogLevel })},
	{"INTAKE_SHUTDOWN_TIMEOUT", queue.DefaultShutdownGrace.String(), "Grace period on SIGTERM to finish in-flight requests and jobs.", duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{"INTAKE_PPROF_ADDR", "", "Address a service serves Go's net/http/pprof profiles on (e.g. 127.0.0.1:6060; keep it on loopback); empty disables profiling.", str(func(c *Config) *string { return &c.PprofAddr })},
	{"INTAKE_PDF_ENGINE", "auto", "Text engine: auto (resident if its helper runs, else pdftotext if installed, else pdfium), resident, pdftotext, pdfium, ocr.", str(func(c *Config) *string { return &c.PDFEngine })},
	{"INTAKE_PDF_TIMEOUT", "20s", "Deadline for extracting one PDF's text.", duration(func(c *Config) *time.Duration { return &c.PDFTimeout })},
	{"INTAKE_OCR_PAGE_TIMEOUT", "10s", "Budget for rendering and OCR of one scanned page, within INTAKE_PDF_TIMEOUT; a page over it is left unread with a warning in the document's events, and the document fails only if required values are then missing.", duration(func(c *Config) *time.Duration { return &c.OCRPageTimeout })},
	{"INTAKE_PDF_WORKERS", "0", "pdfium instances in the warm pool and resident helpers (0 = GOMAXPROCS).", integer(func(c *Config) *int { return &c.PDFWorkers })},
	{"INTAKE_PDF_RESIDENT_BIN", "", "The resident engine's helper (pdftext-resident, built by make build into bin/); empty: next to the running executable, then PATH.", str(func(c *Config) *string { return &c.PDFResidentBin })},
	{"INTAKE_EMBEDDED_MAX_COUNT", "16", "PDF attachments read per document when looking for an embedded Order-X/UBL/Factur-X document; later ones are ignored.", integer(func(c *Config) *int { return &c.EmbeddedMaxCount })},
	{"INTAKE_EMBEDDED_MAX_BYTES", "10485760", "Largest PDF attachment read (10 MiB); larger ones are ignored.", byteSize(func(c *Config) *int64 { return &c.EmbeddedMaxBytes })},
	{"INTAKE_EMBEDDED_TIMEOUT", "10s", "Deadline for listing and reading one PDF's attachments.", duration(func(c *Config) *time.Duration { return &c.EmbeddedTimeout })},
	{"INTAKE_PROCESSOR_CONCURRENCY", "0", "Documents one processor works on at once (0 = twice GOMAXPROCS: a document waits on S3, PostgreSQL and JetStream for part of its time, so as many documents as cores leave cores idle).", integer(func(c *Config) *int { return &c.ProcessorConcurrency })},
	{"INTAKE_PROCESSOR_CLIENT_CONCURRENCY", "0", "Hard cap on the documents of one client a processor works on at once (0 = INTAKE_PROCESSOR_CONCURRENCY). Fairness does not need it: INTAKE_CLIENT_SHARE, INTAKE_CLIENT_BURST and INTAKE_CLIENT_COST_HALF_LIFE already keep a worker and a helper for other clients.", integer(func(c *Config) *int { return &c.ProcessorClientConcurrency })},
	{"INTAKE_PROCESSOR_FAIR_WINDOW", strconv.Itoa(queue.DefaultFairWindow), "Jobs a processor pulls ahead of its workers (heartbeating them) so that clients take turns: a client's job within this window waits for at most one job of each other client.", integer(func(c *Config) *int { return &c.ProcessorFairWindow })},
	{"INTAKE_CLIENT_SHARE", "50", "Percent of a processor's workers, and of its PDF helpers, that one client may hold while another client waits (at least one). 100 = no cap.", integer(func(c *Config) *int { return &c.ClientShare })},
	{"INTAKE_CLIENT_BURST", "100", "Reserve workers and PDF helpers, in percent of each pool, that only a client with nothing running may start on when the pool is busy, so a quiet client never waits for another client's running documents (a running document cannot be preempted). 0 = none.", integer(func(c *Config) *int { return &c.ClientBurst })},
	{"INTAKE_CLIENT_COST_HALF_LIFE", "1m", "Clients waiting for a worker or a PDF helper are served least measured use first: each client's worker and helper time, halved every this long (a flood or expensive PDFs put their client behind the others). 0 = plain turns.", duration(func(c *Config) *time.Duration { return &c.ClientCostHalfLife })},
	{"INTAKE_PROCESSOR_RETRY_SCHEDULE", "1m,5m,30m,2h,6h,12h", "Backoff between attempts of a document deferred for a missing mapping; then dlq.", schedule(func(c *Config) *[]time.Duration { return &c.ProcessorRetry })},
	{"INTAKE_PROCESSOR_MAX_FAILURES", "3", "Failed attempts (unreadable PDF, deadline, crash) before a document goes to dlq.", integer(func(c *Config) *int { return &c.ProcessorMaxFailures })},
	{"INTAKE_PROCESSOR_FAILURE_BACKOFF", "10s", "Delay before a document whose extraction failed (unreadable PDF, deadline, crash) is tried again.", duration(func(c *Config) *time.Duration { return &c.ProcessorFailureDelay })},
	{"INTAKE_PROCESSOR_ACK_WAIT", queue.DefaultProcessorAckWait.String(), "How long JetStream waits for a processor's ack or heartbeat before it redelivers the job (the job of a killed worker comes back after this).", duration(func(c *Config) *time.Duration { return &c.ProcessorAckWait })},
	{"INTAKE_PROCESSOR_MAX_ACK_PENDING", strconv.Itoa(queue.DefaultProcessorMaxAckPending), "Jobs delivered to all processors and not yet acked, deferred documents included (the processor consumer's MaxAckPending).", integer(func(c *Config) *int { return &c.ProcessorMaxAckPending })},
	{"INTAKE_SWEEP_INTERVAL", "1m", "How often the sweeper looks for stuck documents and unsent outbox rows.", duration(func(c *Config) *time.Duration { return &c.SweepInterval })},
	{"INTAKE_STUCK_AFTER", "10m", "A document whose state has not moved for this long is re-enqueued by the sweeper.", duration(func(c *Config) *time.Duration { return &c.StuckAfter })},
	{"INTAKE_ORPHAN_GRACE", "1h", "A source object no document refers to (an upload killed between storing the PDF and its commit) is removed once it is older than this.", duration(func(c *Config) *time.Duration { return &c.OrphanGrace })},
	{"INTAKE_ORPHAN_INTERVAL", "10m", "How often a processor looks for orphaned source objects (at start those of the last two days of upload dates, then those written since its last pass); 0 disables.", duration(func(c *Config) *time.Duration { return &c.OrphanInterval })},
	{"INTAKE_WEBHOOK_TIMEOUT", webhook.DefaultTimeout.String(), "Time a webhook call may take before it counts as failed.", duration(func(c *Config) *time.Duration { return &c.WebhookTimeout })},
	{"INTAKE_WEBHOOK_RETRY_SCHEDULE", "5s,5m,30m,2h,5h,10h,10h", "Backoff between webhook attempts (with jitter); then finished_with_failure.", schedule(func(c *Config) *[]time.Duration { return &c.WebhookRetry })},
	{"INTAKE_WEBHOOK_ALLOW_PRIVATE", "false", "Allow webhook URLs on loopback and private addresses (dev and tests); link-local and cloud metadata addresses are always refused.", boolean(func(c *Config) *bool { return &c.WebhookAllowPrivate })},
	{"INTAKE_WEBHOOK_CLIENT_CONCURRENCY", "4", "Webhook calls in flight per client, across all dispatcher replicas (slots leased in PostgreSQL; a killed replica's slot returns after twice INTAKE_WEBHOOK_TIMEOUT plus 30s).", integer(func(c *Config) *int { return &c.WebhookConcurrency })},
	{"INTAKE_DISPATCHER_CONCURRENCY", "16", "Webhook calls in flight per dispatcher process.", integer(func(c *Config) *int { return &c.DispatcherConcurrency })},
}

// FromEnv builds the configuration from getenv (os.Getenv in main; a map in
// tests), applying defaults, then validates it. Errors name the variable.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{Tuning: defaultTuning}
	for _, v := range Vars {
		val, from := getenv(v.Name), "environment"
		if val == "" {
			val, from = v.Default, "default"
		}
		if val == "" {
			continue
		}
		if err := v.set(&c, val); err != nil {
			return c, fmt.Errorf("%s (%s %q): %w", v.Name, from, val, err)
		}
	}
	if c.PDFWorkers == 0 {
		c.PDFWorkers = runtime.GOMAXPROCS(0)
	}
	if c.ProcessorConcurrency == 0 {
		// Extraction is CPU-bound (INTAKE_PDF_WORKERS helpers, one per core),
		// but a document also waits for its source PDF, its result puts and
		// its commits: with one document per core the cores idled through
		// those waits (make bench: 1.7 of 2 cores busy at the maximum), and
		// one slow commit held half the capacity (p99 at half load 170–250
		// ms against 28 ms with two per core).
		c.ProcessorConcurrency = 2 * runtime.GOMAXPROCS(0)
	}
	return c, c.validate()
}

// Defaults returns the configuration with every variable at its documented
// default (Vars). A service option left zero falls back to the matching
// field here; the adapters' defaults are their own constants (queue,
// objectstore, webhook), which these fields start from, so each default is
// written once.
func Defaults() Config { return defaults() }

var defaults = sync.OnceValue(func() Config {
	c, err := FromEnv(func(string) string { return "" })
	if err != nil {
		panic(fmt.Sprintf("config: the documented defaults are invalid: %v", err)) // TestDefaults guards this
	}
	return c
})

func (c Config) validate() error {
	if c.BasePath != "" && (!strings.HasPrefix(c.BasePath, "/") || strings.HasSuffix(c.BasePath, "/")) {
		return fmt.Errorf("INTAKE_BASE_PATH %q must start with / and not end with /", c.BasePath)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("INTAKE_LOG_LEVEL %q must be debug, info, warn or error", c.LogLevel)
	}
	switch c.PDFEngine {
	case "auto", "resident", "pdftotext", "pdfium", "ocr":
	default:
		return fmt.Errorf("INTAKE_PDF_ENGINE %q must be auto, resident, pdftotext, pdfium or ocr", c.PDFEngine)
	}
	if c.S3.Endpoint != "" && c.S3.Bucket == "" {
		return fmt.Errorf("INTAKE_S3_BUCKET is required with INTAKE_S3_ENDPOINT")
	}
	if c.StreamReplicas < 1 || c.StreamReplicas > 5 {
		return fmt.Errorf("INTAKE_STREAM_REPLICAS must be between 1 and 5 (JetStream's limit)")
	}
	if c.TemplateBudget < 10*time.Millisecond {
		return fmt.Errorf("INTAKE_TEMPLATE_BUDGET must be at least 10ms")
	}
	if c.UploadRateLimit < 0 || c.UploadRateWindow < time.Second {
		return fmt.Errorf("INTAKE_UPLOAD_RATE_LIMIT must be at least 0 and INTAKE_UPLOAD_RATE_WINDOW at least 1s")
	}
	if t := c.TemplateLimits; t.MaxCount < 1 || t.MaxPatterns < 1 || t.MaxPatternBytes < 1 || t.ChangeRateWindow < time.Second {
		return fmt.Errorf("INTAKE_TEMPLATE_MAX_COUNT, INTAKE_TEMPLATE_MAX_PATTERNS and INTAKE_TEMPLATE_MAX_PATTERN_BYTES must be at least 1 and INTAKE_TEMPLATE_CHANGE_RATE_WINDOW at least 1s")
	}
	if c.ProcessorClientConcurrency < 0 || c.ProcessorFairWindow < 1 {
		return fmt.Errorf("INTAKE_PROCESSOR_CLIENT_CONCURRENCY must be at least 0 and INTAKE_PROCESSOR_FAIR_WINDOW at least 1")
	}
	if c.ClientShare < 1 || c.ClientShare > 100 || c.ClientBurst < 0 || c.ClientBurst > 1000 || c.ClientCostHalfLife < 0 {
		return fmt.Errorf("INTAKE_CLIENT_SHARE must be between 1 and 100, INTAKE_CLIENT_BURST between 0 and 1000 and INTAKE_CLIENT_COST_HALF_LIFE at least 0")
	}
	if c.ProcessorMaxFailures < 1 {
		return fmt.Errorf("INTAKE_PROCESSOR_MAX_FAILURES must be at least 1")
	}
	if h := c.OpsTrustedUserHeader; h != "" && !validHeaderName(h) {
		return fmt.Errorf("INTAKE_OPS_TRUSTED_USER_HEADER %q must be a header name such as X-Forwarded-User", h)
	}
	return nil
}

// RequireDatabase returns an error naming INTAKE_DATABASE_URL when it is
// unset (the separate services need it; standalone can start its own).
func (c Config) RequireDatabase() error {
	if c.DatabaseURL == "" {
		return fmt.Errorf("INTAKE_DATABASE_URL is required")
	}
	return nil
}

// Markdown renders Vars as the README's configuration table.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, v := range Vars {
		def := "`" + v.Default + "`"
		if v.Default == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, def, strings.ReplaceAll(v.Doc, "|", "\\|"))
	}
	return b.String()
}

// validHeaderName reports whether h is an HTTP header name (RFC 9110
// token characters).
func validHeaderName(h string) bool {
	return strings.Trim(h, "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == ""
}
