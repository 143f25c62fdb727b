package mailbox

import (
	"bytes"
	"context"
	"fmt"

	"github.com/docintake/docintake/pkg/store"
	"gopkg.in/yaml.v3"
)

// The mailboxes live in PostgreSQL (table mailboxes): INTAKE_MAILBOXES_FILE
// is upserted there at every start (ApplyMailboxes, like the clients file),
// `intakectl mailboxes add|remove` edits the same rows, and the service's
// pollers follow the table (mailintake.StoredMailboxes). A row holds the entry in
// the file's YAML form, so every setting the file knows is stored, and a
// secret never is (only the file or variable that holds it).

// NormalizeMailbox fills the defaults a file may leave out and validates
// the entry, as LoadMailboxes does for each entry of a file.
func NormalizeMailbox(m Mailbox) (Mailbox, error) {
	m.defaults()
	return m, m.Validate()
}

// EncodeMailbox is the stored form of a mailbox: its YAML entry.
func EncodeMailbox(m Mailbox) (string, error) {
	b, err := yaml.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("mailbox %s: %w", m.ID, err)
	}
	return string(b), nil
}

// DecodeMailbox reads a stored mailbox back, strictly (a setting this
// release does not know is an error, not silently dropped), and validates
// it.
func DecodeMailbox(config string) (Mailbox, error) {
	var m Mailbox
	dec := yaml.NewDecoder(bytes.NewReader([]byte(config)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("stored mailbox: %w", err)
	}
	m, err := NormalizeMailbox(m)
	if err != nil {
		return m, fmt.Errorf("stored mailbox %s: %w", m.ID, err)
	}
	return m, nil
}

// SaveMailbox validates m and stores it (source: store.MailboxFromFile or
// store.MailboxFromCLI); the client must exist.
func SaveMailbox(ctx context.Context, st *store.Store, m Mailbox, source string) error {
	m, err := NormalizeMailbox(m)
	if err != nil {
		return fmt.Errorf("mailbox %q: %w", m.ID, err)
	}
	cfg, err := EncodeMailbox(m)
	if err != nil {
		return err
	}
	if err := st.UpsertMailboxConfig(ctx, store.MailboxConfig{ID: m.ID, ClientID: m.Client, Config: cfg, Source: source}); err != nil {
		return fmt.Errorf("mailbox %s (client %q): %w", m.ID, m.Client, err)
	}
	return nil
}

// ApplyMailboxes upserts the mailboxes of INTAKE_MAILBOXES_FILE; rows the
// file does not name stay (`intakectl mailboxes remove` deletes one).
func ApplyMailboxes(ctx context.Context, st *store.Store, boxes []Mailbox) error {
	for _, m := range boxes {
		if err := SaveMailbox(ctx, st, m, store.MailboxFromFile); err != nil {
			return err
		}
	}
	return nil
}
