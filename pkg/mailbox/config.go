package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"os"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Security is how the connection to the IMAP server is protected.
type Security string

// The security modes of a mailbox's IMAP connection.
const (
	SecurityTLS      Security = "tls"      // implicit TLS (port 993)
	SecurityStartTLS Security = "starttls" // plain connection upgraded before login
	SecurityNone     Security = "none"     // loopback only: a password never crosses a network in clear
)

// IMAP is where a mailbox lives and how to log in. The password is read
// from PasswordFile (or the environment variable PasswordEnv) at each
// connect, so a rotated secret needs no restart; it is never logged.
type IMAP struct {
	Host         string   `yaml:"host"`
	Port         int      `yaml:"port"`
	Security     Security `yaml:"security"`
	Username     string   `yaml:"username"`
	PasswordFile string   `yaml:"password_file"`
	PasswordEnv  string   `yaml:"password_env"`
	// Auth is password (LOGIN, the default) or xoauth2 (SASL XOAUTH2
	// with an access token from OAuth2; see source_config.go).
	Auth   Auth    `yaml:"auth"`
	OAuth2 *OAuth2 `yaml:"oauth2"`
}

// Mailbox is one entry of INTAKE_MAILBOXES_FILE: a folder of one client's
// orders mailbox, and the senders whose mails it turns into documents.
type Mailbox struct {
	ID              string `yaml:"id"`
	Client          string `yaml:"client"`
	IMAP            IMAP   `yaml:"imap"`
	Graph           *Graph `yaml:"graph"` // instead of imap: Microsoft Graph (source_config.go)
	Folder          string `yaml:"folder"`
	ProcessedFolder string `yaml:"processed_folder"`
	ErrorFolder     string `yaml:"error_folder"`
	// Senders maps a sender's address or domain (lower case) to the
	// party_id whose template reads its PDFs; the address wins.
	Senders map[string]string `yaml:"senders"`
}

type mailboxesFile struct {
	Mailboxes []Mailbox `yaml:"mailboxes"`
}

// validID is a mailbox id: it names metrics and rows, so it stays short
// and plain.
var validID = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// LoadMailboxes reads and validates a mailboxes file (INTAKE_MAILBOXES_FILE).
// Errors name the file and the entry.
func LoadMailboxes(path string) ([]Mailbox, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mailboxes file: %w", err)
	}
	var f mailboxesFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true) // a misspelt key must not silently drop a setting
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("mailboxes file %s: %w", path, err)
	}
	seen := map[string]bool{}
	for i := range f.Mailboxes {
		m := &f.Mailboxes[i]
		m.defaults()
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("mailboxes file %s: entry %d (%q): %w", path, i+1, m.ID, err)
		}
		if seen[m.ID] {
			return nil, fmt.Errorf("mailboxes file %s: entry %d: id %q is used twice", path, i+1, m.ID)
		}
		seen[m.ID] = true
	}
	return f.Mailboxes, nil
}

// defaults fills what the file may leave out.
func (m *Mailbox) defaults() {
	if m.Folder == "" {
		m.Folder = "INBOX"
	}
	if m.IMAP.Security == "" {
		m.IMAP.Security = SecurityTLS
	}
	if m.IMAP.Port == 0 {
		m.IMAP.Port = 993
		if m.IMAP.Security != SecurityTLS {
			m.IMAP.Port = 143
		}
	}
	senders := make(map[string]string, len(m.Senders))
	for k, v := range m.Senders {
		senders[strings.ToLower(strings.TrimSpace(k))] = v
	}
	m.Senders = senders
}

// Validate checks one mailbox; the error says which setting is wrong.
func (m Mailbox) Validate() error {
	var errs []error
	if !validID.MatchString(m.ID) {
		errs = append(errs, errors.New("id must be 1-64 of a-z, 0-9, '_', '.', '-'"))
	}
	if m.Client == "" {
		errs = append(errs, errors.New("client is required"))
	}
	errs = append(errs, m.validateSource())
	if m.ProcessedFolder == "" || m.ErrorFolder == "" {
		errs = append(errs, errors.New("processed_folder and error_folder are required"))
	}
	if m.ProcessedFolder == m.Folder || m.ErrorFolder == m.Folder {
		errs = append(errs, fmt.Errorf("processed_folder and error_folder must differ from folder %q", m.Folder))
	}
	for sender, party := range m.Senders {
		if party == "" || sender == "" || strings.ContainsAny(sender, " <>") {
			errs = append(errs, fmt.Errorf("senders: %q → %q is not an address or domain with a party_id", sender, party))
		}
	}
	return errors.Join(errs...)
}

func (c IMAP) validate() error {
	var errs []error
	if c.Host == "" {
		errs = append(errs, errors.New("imap.host is required"))
	}
	if c.Port < 1 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("imap.port %d is not a port", c.Port))
	}
	switch c.Security {
	case SecurityTLS, SecurityStartTLS:
	case SecurityNone:
		if !loopback(c.Host) {
			errs = append(errs, fmt.Errorf("imap.security none is allowed only for a loopback host, not %q", c.Host))
		}
	default:
		errs = append(errs, fmt.Errorf("imap.security %q must be tls, starttls or none", c.Security))
	}
	if c.Username == "" {
		errs = append(errs, errors.New("imap.username is required"))
	}
	errs = append(errs, c.validateAuth())
	return errors.Join(errs...)
}

// loopback tells whether host names this machine without a resolver: an
// address in 127/8 or ::1, or "localhost".
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// password reads the login secret now (a rotated file is picked up at the
// next connect). getenv is os.Getenv outside tests.
func (c IMAP) password(getenv func(string) string) (string, error) {
	return secret{File: c.PasswordFile, Env: c.PasswordEnv}.read("imap.password", getenv)
}

// Party returns the party_id of the sender from (an RFC 5322 address):
// the exact address's, else its domain's.
func (m Mailbox) Party(from string) (string, bool) {
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return "", false
	}
	a := strings.ToLower(addr.Address)
	if p, ok := m.Senders[a]; ok {
		return p, true
	}
	at := strings.LastIndexByte(a, '@')
	if at < 0 {
		return "", false
	}
	p, ok := m.Senders[a[at+1:]]
	return p, ok
}
