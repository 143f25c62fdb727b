package ingest

import (
	"net/http"
	"slices"
	"time"

	"github.com/docintake/docintake/pkg/store"
	"github.com/labstack/echo/v4"
)

// queueFetch is how many held documents the queue page reads, oldest
// first, before its filters; queueShown how many it lists.
const (
	queueFetch = 1000
	queueShown = 200
)

// queueAges are the queue page's "waiting longer than" choices.
var queueAges = []struct{ Value, Label string }{
	{"", "any time"}, {"15m", "15 minutes"}, {"1h", "1 hour"}, {"2h", "2 hours"}, {"4h", "4 hours"}, {"24h", "1 day"},
}

// queueFilter is the queue page's query.
type queueFilter struct {
	Client, Template, Reason, Age string
}

func (f queueFilter) keeps(h store.Held, now time.Time) bool {
	if f.Client != "" && h.ClientID != f.Client {
		return false
	}
	if f.Template != "" && h.Template != f.Template && h.PartyID != f.Template {
		return false
	}
	if f.Reason != "" && h.StatusReason.WireValue() != f.Reason {
		return false
	}
	if age, err := time.ParseDuration(f.Age); err == nil && now.Sub(h.UpdatedAt) < age {
		return false
	}
	return true
}

// queueRow is one held document of the queue page.
type queueRow struct {
	store.Held
	Reason string
	Wait   time.Duration
	Left   time.Duration // until the timeout releases it
}

// queueChoices are the values the filters offer: those of the documents
// the operator may see.
type queueChoices struct {
	Clients, Templates, Reasons []string
}

func (q *queueChoices) add(h store.Held) {
	for _, x := range []struct {
		list *[]string
		v    string
	}{{&q.Clients, h.ClientID}, {&q.Templates, h.Template}, {&q.Reasons, h.StatusReason.WireValue()}} {
		if x.v != "" && !slices.Contains(*x.list, x.v) {
			*x.list = append(*x.list, x.v)
		}
	}
}

// handleQueue lists the held documents the operator may see, oldest
// first, filtered by client, template (or party id), reason and age.
func (r *reviewer) handleQueue(c echo.Context) error {
	f := queueFilter{Client: c.QueryParam("client"), Template: c.QueryParam("template"), Reason: c.QueryParam("reason"),
		Age: c.QueryParam("age")}
	held, err := r.ops.store.ReviewQueue(c.Request().Context(), "", queueFetch)
	if err != nil {
		return r.ops.fail(c, err)
	}
	op, now := operatorOf(c), time.Now()
	var rows []queueRow
	var choices queueChoices
	total := 0
	for _, h := range held {
		if !op.sees(h.ClientID) {
			continue
		}
		choices.add(h)
		if !f.keeps(h, now) {
			continue
		}
		total++
		if len(rows) < queueShown {
			rows = append(rows, queueRow{Held: h, Reason: h.StatusReason.WireValue(), Wait: now.Sub(h.UpdatedAt), Left: h.Until.Sub(now)})
		}
	}
	for _, l := range [][]string{choices.Clients, choices.Templates, choices.Reasons} {
		slices.Sort(l)
	}
	return r.ops.render(c, http.StatusOK, "review_queue", map[string]any{
		"Rows": rows, "Total": total, "Filter": f, "Choices": choices, "Ages": queueAges,
		"Truncated": len(held) == queueFetch, "Done": reviewDone(c),
	})
}
