package ingest

import (
	"context"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/lifecycle"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/template"
)

// draftPush is what the template API bounds a client's template changes
// with, for a template drafted on the review page: the console pushes it
// as a change of the document's client (its change rate, its uploads for
// the sample runs, its template count), whoever pushes it.
type draftPush struct {
	lim     config.TemplateLimits
	budget  time.Duration
	changes func() *clientLimit
	uploads func() *clientLimit
}

// draftPush is the server's template limits for the review page
// (EnableOps); the rate limits are read per push, as the API reads them.
func (s *Server) draftPush() draftPush {
	return draftPush{lim: s.cfg.TemplateLimits, budget: s.cfg.TemplateBudget,
		changes: func() *clientLimit { return s.templateChangeLimit },
		uploads: func() *clientLimit { return s.uploadLimit }}
}

// pushRequest is a drafted template to push.
type pushRequest struct {
	doc       document.Document
	name      string // the name the page offered; the content must name itself so
	scope     string // "" global, else the document's client
	content   []byte
	expect    []byte // the document's sample JSON (lifecycle.Drafted's)
	ifVersion *int
	comment   string
	who       string
}

// push checks a draft as PUT /templates/{name} checks a client's change,
// from cheap to dear (the change rate, the sizes, the template count, the
// template strictly and its regexes, the version it is based on, an
// upload per sample run), then lets review push it (lifecycle.PushDraft:
// the samples, refused when one fails).
func (p draftPush) push(ctx context.Context, review lifecycle.Review, st *store.Store, req pushRequest) (lifecycle.DraftPushed, error) {
	client := req.doc.ClientID
	if err := p.changes().take(ctx, client); err != nil {
		return lifecycle.DraftPushed{}, err
	}
	if int64(len(req.content)) > p.lim.MaxBytes {
		return lifecycle.DraftPushed{}, tooLargeCode(codeTemplateTooLarge, "the template", p.lim.MaxBytes)
	}
	smp, err := review.DraftSamples(ctx, req.doc, req.scope, req.name, req.expect)
	if err != nil {
		return lifecycle.DraftPushed{}, err
	}
	if samplesSize(smp) > p.lim.SamplesMaxBytes {
		return lifecycle.DraftPushed{}, tooLargeCode(codeSamplesTooLarge, "the samples together", p.lim.SamplesMaxBytes)
	}
	if req.scope != "" {
		if err := checkCount(ctx, st, req.scope, req.name, p.lim.MaxCount); err != nil {
			return lifecycle.DraftPushed{}, err
		}
	}
	pp, err := (&templatesAPI{lim: p.lim}).parsePush(req.name, req.name+".yml", req.content, smp)
	if err != nil {
		return lifecycle.DraftPushed{}, err
	}
	if req.ifVersion != nil {
		if err := st.CheckTemplateVersion(ctx, req.scope, req.name, *req.ifVersion); err != nil {
			return lifecycle.DraftPushed{}, err
		}
	}
	for range sampleRuns(smp) {
		if err := p.uploads().take(ctx, client); err != nil {
			return lifecycle.DraftPushed{}, err
		}
	}
	pp.ClientID, pp.IfVersion, pp.Comment = req.scope, req.ifVersion, req.comment
	return review.PushDraft(template.WithBudget(ctx, p.budget), req.doc, pp, req.who)
}

func samplesSize(smp []store.TemplateSample) int64 {
	var n int64
	for _, s := range smp {
		n += int64(len(s.Content))
	}
	return n
}
