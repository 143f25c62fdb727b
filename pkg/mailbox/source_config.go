package mailbox

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Auth is how an IMAP mailbox logs in.
type Auth string

// The IMAP login methods.
const (
	AuthPassword Auth = "password" // LOGIN with imap.password_file / password_env (the default)
	AuthXOAUTH2  Auth = "xoauth2"  // SASL XOAUTH2 with an OAuth2 access token (Gmail, Microsoft 365)
)

// OAuth2 is where an IMAP mailbox's access token comes from: a token file
// (or variable) that something else keeps fresh, or a token endpoint asked
// with a refresh token (Gmail) or with client credentials (Microsoft 365).
type OAuth2 struct {
	TokenFile string `yaml:"token_file"` // a ready access token, read at each login
	TokenEnv  string `yaml:"token_env"`
	// TokenURL is the token endpoint; TenantID alone stands for Entra ID's
	// https://login.microsoftonline.com/{tenant_id}/oauth2/v2.0/token.
	TokenURL         string `yaml:"token_url"`
	TenantID         string `yaml:"tenant_id"`
	ClientID         string `yaml:"client_id"`
	ClientSecretFile string `yaml:"client_secret_file"`
	ClientSecretEnv  string `yaml:"client_secret_env"`
	// A refresh token makes the grant refresh_token; without one it is
	// client_credentials.
	RefreshTokenFile string `yaml:"refresh_token_file"`
	RefreshTokenEnv  string `yaml:"refresh_token_env"`
	// Scope defaults to Exchange Online's https://outlook.office365.com/.default
	// for client credentials.
	Scope string `yaml:"scope"`
}

// Graph is a Microsoft 365 mailbox read through the Microsoft Graph mail
// API with an app registration's client credentials (for tenants where
// IMAP is off). The folders are mail folders by display name ("INBOX" is
// the well-known inbox).
type Graph struct {
	TenantID         string `yaml:"tenant_id"`
	ClientID         string `yaml:"client_id"`
	ClientSecretFile string `yaml:"client_secret_file"`
	ClientSecretEnv  string `yaml:"client_secret_env"`
	User             string `yaml:"user"`      // the mailbox: user principal name or id
	BaseURL          string `yaml:"base_url"`  // default DefaultGraphBaseURL
	TokenURL         string `yaml:"token_url"` // default Entra ID's token endpoint of tenant_id
}

// Microsoft's endpoints, the defaults of base_url and token_url.
const (
	DefaultGraphBaseURL = "https://graph.microsoft.com/v1.0"
	entraTokenURL       = "https://login.microsoftonline.com/%s/oauth2/v2.0/token"
	graphScope          = "https://graph.microsoft.com/.default"
	exchangeIMAPScope   = "https://outlook.office365.com/.default"
)

// validateSource checks the mailbox's server settings: imap or graph,
// not both.
func (m Mailbox) validateSource() error {
	if m.Graph == nil {
		return m.IMAP.validate()
	}
	if m.IMAP.Host != "" || m.IMAP.Username != "" {
		return errors.New("give imap or graph, not both")
	}
	return m.Graph.validate()
}

func (g Graph) validate() error {
	var errs []error
	if g.ClientID == "" || g.User == "" {
		errs = append(errs, errors.New("graph.client_id and graph.user are required"))
	}
	if g.TenantID == "" && g.TokenURL == "" {
		errs = append(errs, errors.New("graph.tenant_id (or graph.token_url) is required"))
	}
	if (g.ClientSecretFile == "") == (g.ClientSecretEnv == "") {
		errs = append(errs, errors.New("give one of graph.client_secret_file or graph.client_secret_env"))
	}
	errs = append(errs, checkURL("graph.base_url", g.BaseURL), checkURL("graph.token_url", g.TokenURL))
	return errors.Join(errs...)
}

// validateAuth checks the login settings of an IMAP mailbox.
func (c IMAP) validateAuth() error {
	switch c.Auth {
	case "", AuthPassword:
		if c.OAuth2 != nil {
			return errors.New("imap.oauth2 needs imap.auth: xoauth2")
		}
		if (c.PasswordFile == "") == (c.PasswordEnv == "") {
			return errors.New("give one of imap.password_file or imap.password_env")
		}
		return nil
	case AuthXOAUTH2:
		if c.OAuth2 == nil {
			return errors.New("imap.auth xoauth2 needs imap.oauth2")
		}
		if c.PasswordFile != "" || c.PasswordEnv != "" {
			return errors.New("imap.auth xoauth2 takes no password")
		}
		return c.OAuth2.validate()
	}
	return fmt.Errorf("imap.auth %q must be password or xoauth2", c.Auth)
}

func (o OAuth2) validate() error {
	static := o.TokenFile != "" || o.TokenEnv != ""
	fetched := o.TokenURL != "" || o.TenantID != "" || o.ClientID != ""
	switch {
	case static && fetched:
		return errors.New("imap.oauth2: give token_file/token_env, or a token endpoint with client_id, not both")
	case static:
		if o.TokenFile != "" && o.TokenEnv != "" {
			return errors.New("imap.oauth2: give one of token_file or token_env")
		}
		return nil
	case o.ClientID == "" || (o.TokenURL == "" && o.TenantID == ""):
		return errors.New("imap.oauth2: give token_file, or client_id with token_url or tenant_id")
	}
	var errs []error
	refresh := o.RefreshTokenFile != "" || o.RefreshTokenEnv != ""
	if o.ClientSecretFile != "" && o.ClientSecretEnv != "" || o.RefreshTokenFile != "" && o.RefreshTokenEnv != "" {
		errs = append(errs, errors.New("imap.oauth2: give each secret as a file or a variable, not both"))
	}
	if !refresh && o.ClientSecretFile == "" && o.ClientSecretEnv == "" {
		errs = append(errs, errors.New("imap.oauth2: client credentials need client_secret_file or client_secret_env"))
	}
	if !refresh && o.Scope == "" && o.TenantID == "" {
		errs = append(errs, errors.New("imap.oauth2: client credentials need a scope"))
	}
	errs = append(errs, checkURL("imap.oauth2.token_url", o.TokenURL))
	return errors.Join(errs...)
}

// checkURL accepts an empty value (the default applies), https, or http
// to a loopback host: a token or secret never crosses a network in clear.
func checkURL(name, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute URL", name, raw)
	}
	switch {
	case u.User != nil:
		return fmt.Errorf("%s must not hold credentials", name)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%s %q must be https (http only for a loopback host)", name, raw)
}

// secret is a value read from a file or an environment variable at each
// use, so a rotated secret needs no restart. Errors name the file or the
// variable, never the value.
type secret struct{ File, Env string }

func (s secret) set() bool { return s.File != "" || s.Env != "" }

func (s secret) read(name string, getenv func(string) string) (string, error) {
	if s.Env != "" {
		v := getenv(s.Env)
		if v == "" {
			return "", fmt.Errorf("%s_env: %s is empty", name, s.Env)
		}
		return v, nil
	}
	b, err := os.ReadFile(s.File)
	if err != nil {
		return "", fmt.Errorf("%s_file: %w", name, err)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s_file: %s is empty", name, s.File)
	}
	return v, nil
}
