package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
)

// MappingAdded is what AddMapping did.
type MappingAdded struct {
	// Previous is the value the entry had before (Replaced tells whether it
	// had one): a correction of a wrong entry is recorded as such.
	Previous string
	Replaced bool
	// Retried are the client's documents that waited for the entry
	// (deferred for it), given a process job now.
	Retried []document.Document
}

// AddMapping writes the mapping entry m (table m.Kind, m.Key → m.Value) of
// d's client, as a person maps an unknown article while reviewing d (the
// MAPPING_NOT_RESOLVED path), in one transaction with: an event on d's
// history naming who, the entry and the value it replaces; and a process
// job now for every document of the client deferred for that entry
// (store.RetryDeferredFor), each with an event naming who, so they need
// not wait for their next retry. d itself may be one of them; a document
// held for review is approved again by its reviewer (Approve looks the
// entry up). Kind, key and value must not be empty (EINVALID).
func (r Review) AddMapping(ctx context.Context, d document.Document, m store.Mapping, who string) (MappingAdded, error) {
	var out MappingAdded
	m.Kind, m.Key, m.Value = strings.TrimSpace(m.Kind), strings.TrimSpace(m.Key), strings.TrimSpace(m.Value)
	if m.Kind == "" || m.Key == "" || m.Value == "" {
		return out, document.CodedErrorf(document.EINVALID, "mapping_invalid", "a mapping needs a kind, a key and a value")
	}
	err := r.Store.WithTx(ctx, func(tx *store.Store) error {
		out = MappingAdded{}
		cur, err := tx.Document(ctx, d.ID) // the event shows the state it has now
		if err != nil {
			return err
		}
		prev, had, err := tx.LookupMapping(ctx, d.ClientID, m.Kind, m.Key)
		if err != nil {
			return err
		}
		out.Previous, out.Replaced = prev, had
		if err := tx.PutMappings(ctx, d.ClientID, []store.Mapping{m}); err != nil {
			return err
		}
		if err := tx.RecordEvent(ctx, cur.ID, cur.State, who, mappingDetail(d.ClientID, m, out)); err != nil {
			return err
		}
		out.Retried, err = tx.RetryDeferredFor(ctx, d.ClientID, template.MissingMapping(m.Kind, m.Key), who,
			func(d document.Document, seq int) store.OutboxRow { return ProcessJob(ctx, r.Prefix, d, seq) })
		return err
	})
	return out, err
}

// mappingDetail is the event of an added mapping entry.
func mappingDetail(clientID string, m store.Mapping, a MappingAdded) string {
	s := fmt.Sprintf("mapping %s %q → %q added for client %s", m.Kind, m.Key, m.Value, clientID)
	if a.Replaced {
		s += fmt.Sprintf(" (was %q)", a.Previous)
	}
	return s
}
