package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
)

// DraftPushed is what PushDraft stored.
type DraftPushed struct {
	Name     string
	ClientID string // the scope ("" = global)
	Version  int
	Changed  bool // false: the same content and samples were the current version
	// Results are the samples' verdicts, as `templates push` runs them.
	Results []catalogue.SampleResult
}

// DraftSamples are the samples a draft of d pushed as version N+1 of name
// in scope clientID carries: the current version's (the template's
// regression suite, which the draft must read too), with d's PDF and its
// confirmed order (expect, the X.json Draft made) replacing an earlier
// sample of d. A template that does not exist yet has only d's.
func (r Review) DraftSamples(ctx context.Context, d document.Document, clientID, name string, expect []byte) ([]store.TemplateSample, error) {
	var cur []store.TemplateSample
	v, err := r.Store.TemplateVersion(ctx, clientID, name, 0)
	switch document.ErrorKind(err) {
	case "":
		cur = v.Samples
	case document.ENOTFOUND:
	default:
		return nil, err
	}
	pdf, err := r.object(ctx, d.SourceKey, "the PDF of "+d.LogID)
	if err != nil {
		return nil, err
	}
	return withSample(cur, SampleName(d), pdf, expect), nil
}

// PushDraft stores p, a template drafted from d (Draft, perhaps edited by
// the person), as `intakectl templates push` does without --force: its
// samples run first (r.SampleText, under ctx's template budget) and one
// that fails refuses the push (EINVALID samples_failed; Results say what
// differs; nothing stored); p.IfVersion is honoured (ECONFLICT when
// another push came first). The version and an event on d's history
// naming who, the version and its samples are one transaction. The caller
// validated p (catalogue.ParsePush) and applied its limits.
func (r Review) PushDraft(ctx context.Context, d document.Document, p store.TemplatePush, who string) (DraftPushed, error) {
	out := DraftPushed{Name: p.Name, ClientID: p.ClientID}
	text, done := r.sampleText()
	defer done()
	var err error
	if out.Results, err = catalogue.RunSamples(ctx, p, text); err != nil {
		return out, fmt.Errorf("samples of %s: %w", p.Name, err)
	}
	if n := catalogue.FailedSamples(out.Results); n > 0 {
		return out, document.CodedErrorf(document.EINVALID, "samples_failed",
			"%d of %d samples failed; nothing stored: the draft does not read them as confirmed", n, len(out.Results))
	}
	p.PushedBy, p.Forced = who, false
	if p.Comment == "" {
		p.Comment = "drafted from document " + d.LogID
	}
	err = r.Store.WithTx(ctx, func(tx *store.Store) error {
		pr, err := tx.PushTemplate(ctx, p)
		if err != nil {
			return err
		}
		out.Version, out.Changed = pr.Version, pr.Changed
		if !pr.Changed {
			return nil
		}
		cur, err := tx.Document(ctx, d.ID)
		if err != nil {
			return err
		}
		return tx.RecordEvent(ctx, cur.ID, cur.State, who, pushedDetail(out))
	})
	return out, err
}

// DraftPushedEvent starts the detail of the event PushDraft records.
const DraftPushedEvent = "drafted template pushed as"

// pushedDetail is the document event of a pushed draft.
func pushedDetail(p DraftPushed) string {
	scope := "global"
	if p.ClientID != "" {
		scope = "client " + p.ClientID
	}
	names := make([]string, len(p.Results))
	for i, res := range p.Results {
		names[i] = res.Name
	}
	return fmt.Sprintf(DraftPushedEvent+" %s v%d (%s): %d samples pass (%s)", p.Name, p.Version, scope,
		len(p.Results), strings.Join(names, ", "))
}
