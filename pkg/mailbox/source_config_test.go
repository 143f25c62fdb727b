package mailbox_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/stretchr/testify/require"
)

// The README's shapes for Microsoft Graph and for IMAP with XOAUTH2 load.
func TestLoadMailboxesGraphAndXOAUTH2(t *testing.T) {
	mbs, err := mailbox.LoadMailboxes(writeFile(t, `mailboxes:
  - id: orders-graph
    client: acme
    graph: {tenant_id: 0e7c-tenant, client_id: 5f1a-app, client_secret_file: /run/secrets/graph, user: orders@acme.example}
    processed_folder: Processed
    error_folder: Not processed
  - id: orders-m365-imap
    client: acme
    imap:
      host: outlook.office365.com
      username: orders@acme.example
      auth: xoauth2
      oauth2: {tenant_id: 0e7c-tenant, client_id: 5f1a-app, client_secret_env: IMAP_CLIENT_SECRET}
    processed_folder: Processed
    error_folder: Not processed
  - id: orders-gmail
    client: acme
    imap:
      host: imap.gmail.com
      username: orders@acme.example
      auth: xoauth2
      oauth2: {token_url: "https://oauth2.googleapis.com/token", client_id: 1234.apps.googleusercontent.com,
               client_secret_file: /run/secrets/google, refresh_token_file: /run/secrets/google-refresh}
    processed_folder: Processed
    error_folder: Not processed
`))
	require.NoError(t, err)
	require.Len(t, mbs, 3)
	require.Equal(t, "orders@acme.example", mbs[0].Graph.User)
	require.Equal(t, "INBOX", mbs[0].Folder)
	require.Equal(t, mailbox.AuthXOAUTH2, mbs[1].IMAP.Auth)
	require.Equal(t, 993, mbs[1].IMAP.Port)
	require.Equal(t, "/run/secrets/google-refresh", mbs[2].IMAP.OAuth2.RefreshTokenFile)
}

// Graph and OAuth2 settings are checked: one source, credentials given
// once, no token or secret sent in clear beyond loopback.
func TestLoadMailboxesGraphAndOAuth2Errors(t *testing.T) {
	const folders = "processed_folder: P, error_folder: E"
	for name, c := range map[string]struct{ yaml, want string }{
		"imap and graph": {`{id: a, client: c, ` + folders + `, imap: {host: h, username: u, password_env: PW},
          graph: {tenant_id: t, client_id: i, client_secret_env: S, user: u}}`, "give imap or graph, not both"},
		"graph without secret": {`{id: a, client: c, ` + folders + `, graph: {tenant_id: t, client_id: i, user: u}}`,
			"give one of graph.client_secret_file or graph.client_secret_env"},
		"graph without tenant": {`{id: a, client: c, ` + folders + `, graph: {client_id: i, client_secret_env: S, user: u}}`,
			"graph.tenant_id (or graph.token_url) is required"},
		"graph over http": {`{id: a, client: c, ` + folders + `, graph: {tenant_id: t, client_id: i, client_secret_env: S, user: u,
          base_url: "http://graph.example.com/v1.0"}}`, "graph.base_url \"http://graph.example.com/v1.0\" must be https (http only for a loopback host)"},
		"token url with credentials": {`{id: a, client: c, ` + folders + `, graph: {tenant_id: t, client_id: i, client_secret_env: S, user: u,
          token_url: "https://me:pw@login.example.com/token"}}`, "graph.token_url must not hold credentials"},
		"xoauth2 without oauth2": {`{id: a, client: c, ` + folders + `, imap: {host: h, username: u, auth: xoauth2}}`,
			"imap.auth xoauth2 needs imap.oauth2"},
		"xoauth2 with a password": {`{id: a, client: c, ` + folders + `, imap: {host: h, username: u, auth: xoauth2, password_env: PW,
          oauth2: {token_env: T}}}`, "imap.auth xoauth2 takes no password"},
		"token file and endpoint": {`{id: a, client: c, ` + folders + `, imap: {host: h, username: u, auth: xoauth2,
          oauth2: {token_file: /t, client_id: i, tenant_id: t, client_secret_env: S}}}`, "not both"},
		"client credentials without scope": {`{id: a, client: c, ` + folders + `, imap: {host: h, username: u, auth: xoauth2,
          oauth2: {token_url: "https://login.example.com/token", client_id: i, client_secret_env: S}}}`, "client credentials need a scope"},
		"unknown auth": {`{id: a, client: c, ` + folders + `, imap: {host: h, username: u, auth: cram-md5, password_env: PW}}`,
			`imap.auth "cram-md5" must be password or xoauth2`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mailbox.LoadMailboxes(writeFile(t, "mailboxes:\n  - "+c.yaml+"\n"))
			require.ErrorContains(t, err, c.want)
		})
	}
}
