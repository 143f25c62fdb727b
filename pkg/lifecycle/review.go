package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/resultjson"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
)

// Reading is what the processor read of a document it held for review
// (issue 27), stored under ReadingKey: the rejection, the result JSON it
// would have written, and the canonical order with what the JSON shape does
// not carry (discounts, printed subtotals), which an approval keeps.
type Reading struct {
	Reason    document.Reason `json:"reason"`
	Detail    string          `json:"detail"`
	Result    resultjson.File `json:"result"`
	Canonical order.Order     `json:"canonical"`
}

// ReadingKey is where a held document's Reading is stored, beside its
// results ("results/YYYY/MM/DD/<log_id>.read.json").
func ReadingKey(d document.Document) string {
	return objectstore.ResultKey(d.LogID, d.CreatedAt, "read.json")
}

// PutReading stores a held document's reading.
func PutReading(ctx context.Context, objects objectstore.Store, d document.Document, r Reading) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode reading: %w", err)
	}
	return put(ctx, objects, ReadingKey(d), "application/json", b)
}

func put(ctx context.Context, objects objectstore.Store, key, ct string, b []byte) error {
	if err := objects.Put(ctx, key, bytes.NewReader(b), int64(len(b)), ct); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// Review holds what the review actions need.
type Review struct {
	Store   *store.Store
	Objects objectstore.Store
	// Pinned returns the template version the document was processed with
	// (catalogue.Catalogue.Pinned): its checks decide an approval.
	Pinned func(ctx context.Context, documentID string) (*catalogue.Version, error)
	Prefix string // INTAKE_SUBJECT_PREFIX
	// SampleText reads the PDFs of template samples as the processor reads
	// documents (catalogue.SampleText with the PDF options) for AddSample
	// and Draft; nil starts a default engine per call (learn.go).
	SampleText catalogue.TextFunc
}

// Held returns a held document's reading. ECONFLICT when the document is
// not held for review.
func (r Review) Held(ctx context.Context, d document.Document) (Reading, error) {
	var rd Reading
	if _, held, err := r.Store.ReviewUntil(ctx, d.ID); err != nil {
		return rd, err
	} else if !held {
		return rd, document.CodedErrorf(document.ECONFLICT, "not_held_for_review", "document %s is %s and not held for review", d.LogID, d.State)
	}
	return r.Reading(ctx, d)
}

// Reading returns the reading stored for d (held for review, or deferred
// for a missing mapping), whatever its state now; ENOTFOUND when none was
// stored.
func (r Review) Reading(ctx context.Context, d document.Document) (Reading, error) {
	var rd Reading
	b, err := r.object(ctx, ReadingKey(d), "what was read of "+d.LogID)
	if err != nil {
		return rd, err
	}
	if err := json.Unmarshal(b, &rd); err != nil {
		return rd, fmt.Errorf("decode what was read of %s: %w", d.LogID, err)
	}
	return rd, nil
}

// Release ends the hold of a document held for review and queues the
// rejection's delivery now, as the processor would have without the hold.
// ECONFLICT when it is not held (approved, released or timed out).
func (r Review) Release(ctx context.Context, d document.Document, who string) (document.Document, error) {
	return r.Store.ReleaseReview(ctx, d.ID, who, "released by an operator: the rejection is delivered",
		func(d document.Document) store.OutboxRow { return DeliverJob(ctx, r.Prefix, d, NewDeliveryID()) })
}

// ReleaseTimedOut releases every held document whose review timeout
// passed before now (at most limit per call) with the rejection's delivery,
// as Release does: the client never waits forever.
func ReleaseTimedOut(ctx context.Context, st *store.Store, prefix string, now time.Time, limit int) ([]document.Document, error) {
	if has, err := st.HasReviewTimeouts(ctx, now); err != nil || !has {
		return nil, err
	}
	return st.SweepReviewTimeouts(ctx, now, limit, "sweeper", func(d document.Document) store.OutboxRow {
		return DeliverJob(ctx, prefix, d, NewDeliveryID())
	})
}

// Approve delivers a corrected order for a document held for review as a
// success. The corrected order (the result JSON's order) is decided as the
// processor decides an order: the pinned template's checks and mappings
// (template.Verify). An order whose arithmetic does not close is refused
// (EINVALID, code order_does_not_close, every failed check in the message)
// unless comment confirms the difference; any other rejection is refused
// whatever the comment. Then the order is delivered as the processor
// delivers one (review_po.go): compared with its PO's latest delivery, a
// copy of it moves processed_rejected → processed_ignored as its
// duplicate, anything else moves to processed_success with the openTRANS
// (an ORDER, or a revision as the client takes it) and result JSON written
// as the processor writes them, its delivery, and the PO recorded as
// delivered; the event lists each changed value (old → new), who approved
// and the comment. Of concurrent approvals exactly one wins; the others
// get ECONFLICT.
func (r Review) Approve(ctx context.Context, d document.Document, corrected resultjson.Order, comment, who string) (document.Document, error) {
	rd, err := r.Held(ctx, d)
	if err != nil {
		return d, err
	}
	o, err := corrected.Canonical(&rd.Canonical)
	if err != nil {
		return d, err
	}
	v, err := r.Pinned(ctx, d.ID)
	if err == nil && (v == nil || v.Template == nil) {
		err = document.Errorf(document.EUNAVAILABLE, "no compiled template served")
	}
	if err != nil {
		return d, fmt.Errorf("template of %s: %w", d.LogID, err)
	}
	if err := r.verify(ctx, d, v.Template, o, comment); err != nil {
		return d, err
	}
	res := rd.Result
	res.Order = resultjson.OrderOf(o)
	res.Source = strings.TrimSpace(res.Source + "; corrected in review by " + who)
	return r.deliver(ctx, d, v, o, res, approvalDetail(rd.Result.Order, res.Order, who, comment), who) // review_po.go
}

func withState(d document.Document, s document.State) document.Document { d.State = s; return d }

// verify decides the corrected order as the processor would (see Approve).
func (r Review) verify(ctx context.Context, d document.Document, tpl *template.Template, o *order.Order, comment string) error {
	fails, _ := tpl.CheckOrder(o)
	if len(fails) > 0 {
		if strings.TrimSpace(comment) == "" {
			msgs := make([]string, len(fails))
			for i, f := range fails {
				msgs[i] = f.Check + ": " + f.Detail
			}
			return document.CodedErrorf(document.EINVALID, "order_does_not_close",
				"the corrected order does not close: %s; correct it, or confirm the difference with a comment",
				strings.Join(msgs, "; "))
		}
		// The person confirmed the difference: the other decisions stand.
		t := *tpl
		t.DocIntake.Checks = template.Checks{}
		tpl = &t
	}
	out, err := tpl.Verify(ctx, o, mapper{r.Store, d.ClientID}, d.ResultMode, nil)
	if err != nil {
		return err
	}
	switch out.Status {
	case template.OutcomeSuccess:
		return r.units(ctx, d, o) // units.go
	case template.OutcomeDeferred:
		return document.CodedErrorf(document.EINVALID, "mapping_not_resolved",
			"the corrected order needs a mapping: %s; add it (intakectl mappings) and approve again", out.Detail)
	}
	return document.CodedErrorf(document.EINVALID, "order_rejected", "the corrected order is still rejected (%s): %s",
		out.Reason.WireValue(), out.Detail)
}

// putResults writes the approved order's openTRANS (xml) and result JSON
// where the processor writes a success's, and returns the change naming
// them.
func (r Review) putResults(ctx context.Context, d document.Document, o *order.Order, xml []byte, res resultjson.File) (store.Change, error) {
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return store.Change{}, fmt.Errorf("encode result: %w", err)
	}
	xmlKey, jsonKey := objectstore.ResultKey(d.LogID, d.CreatedAt, "xml"), objectstore.ResultKey(d.LogID, d.CreatedAt, "json")
	if err := put(ctx, r.Objects, xmlKey, "application/xml", xml); err != nil {
		return store.Change{}, err
	}
	if err := put(ctx, r.Objects, jsonKey, "application/json", js); err != nil {
		return store.Change{}, err
	}
	xmlURI, jsonURI := r.Objects.URI(xmlKey), r.Objects.URI(jsonKey)
	clear := document.Reason("")
	c := store.Change{Reason: &clear, ResultKey: &xmlKey, ResultPath: &xmlURI, ResultJSONKey: &jsonKey, ResultJSONPath: &jsonURI,
		DocumentDate: documentDate(o)}
	return c, nil
}

// documentDate is the order's date as the documents table keeps it (nil:
// none read).
func documentDate(o *order.Order) *time.Time {
	if o.IssueDate.IsZero() {
		return nil
	}
	t := time.Date(o.IssueDate.Year, o.IssueDate.Month, o.IssueDate.Day, 0, 0, 0, 0, time.UTC)
	return &t
}

// mapper looks mappings up for Verify, scoped to the document's client.
type mapper struct {
	st       *store.Store
	clientID string
}

func (m mapper) Lookup(ctx context.Context, kind, key string) (string, bool, error) {
	return m.st.LookupMapping(ctx, m.clientID, kind, key)
}
