package ingest

import (
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/store"
	"github.com/labstack/echo/v4"
)

// templateRow is one template on the ops console's templates page.
type templateRow struct {
	store.TemplateInfo
	Scope string
	// Versions are the versions that documents used in the last 24 h,
	// newest first.
	Versions []*versionUsage
}

// versionUsage counts the documents whose latest attempt used one version,
// by outcome.
type versionUsage struct {
	Version                                     int
	Success, Rejected, Ignored, Failed, Pending int
}

func (v *versionUsage) add(s document.State, n int) {
	switch s.Verdict() {
	case document.VerdictSuccess:
		v.Success += n
	case document.VerdictRejected:
		v.Rejected += n
	case document.VerdictIgnored:
		v.Ignored += n
	case document.VerdictFailed:
		v.Failed += n
	default: // pending
		v.Pending += n
	}
}

// usageWindow is the templates page's "last 24 h".
const usageWindow = 24 * time.Hour

func (o *ops) handleTemplates(c echo.Context) error {
	ctx := c.Request().Context()
	op := operatorOf(c)
	list, err := o.store.ListTemplates(ctx, store.TemplatesFilter{All: true})
	if err != nil {
		return o.fail(c, err)
	}
	// A limited operator sees the global templates and its clients' own,
	// with the use its clients made of them.
	list = slices.DeleteFunc(list, func(t store.TemplateInfo) bool { return t.ClientID != "" && !op.sees(t.ClientID) })
	usage, err := o.store.TemplateUsageOf(ctx, op.Clients, time.Now().Add(-usageWindow))
	if err != nil {
		return o.fail(c, err)
	}
	byTemplate := map[int64]map[int]*versionUsage{}
	for _, u := range usage {
		if byTemplate[u.TemplateID] == nil {
			byTemplate[u.TemplateID] = map[int]*versionUsage{}
		}
		v := byTemplate[u.TemplateID][u.Version]
		if v == nil {
			v = &versionUsage{Version: u.Version}
			byTemplate[u.TemplateID][u.Version] = v
		}
		v.add(u.State, u.Count)
	}
	rows := make([]templateRow, 0, len(list))
	for _, t := range list {
		r := templateRow{TemplateInfo: t, Scope: "global"}
		if t.ClientID != "" {
			r.Scope = "client " + t.ClientID
		}
		for _, v := range byTemplate[t.ID] {
			r.Versions = append(r.Versions, v)
		}
		sort.Slice(r.Versions, func(i, j int) bool { return r.Versions[i].Version > r.Versions[j].Version })
		rows = append(rows, r)
	}
	return o.render(c, http.StatusOK, "templates", map[string]any{"Templates": rows, "Done": doneMessage(c)})
}
