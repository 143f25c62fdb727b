package processor

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
	"go.uber.org/zap"
)

// structured runs the document's template on the business document its PDF
// carries (Order-X, UBL, or an invoice to reject), when there is one and the
// template reads attachments. A nil run means: read the PDF's text. Problems
// of the attachments themselves (too large, hostile XML, a PDF pdfdetach
// cannot parse) are logged and leave the decision to the text path; only
// the end of ctx and the template engine's errors are returned.
func (w *worker) structured(ctx context.Context, log *zap.Logger, set *template.Set, pdf []byte, opts template.RunOptions) (*template.Run, string, error) {
	start := time.Now()
	a, err := embedded.Run(ctx, set, pdf, w.embedded, opts)
	if a.Unreadable != nil && !errors.Is(a.Unreadable, pdftext.ErrUnavailable) {
		log.Info("pdf attachments not readable; reading the text", zap.Error(a.Unreadable))
	}
	if a.Found != nil {
		for _, n := range a.Found.Attachments {
			log.Debug("pdf attachment", zap.String("file", n.File), zap.String("result", n.Result))
		}
	}
	if err != nil || a.Run == nil {
		return nil, "", err
	}
	w.metrics.extraction("embedded", time.Since(start))
	return a.Run, a.Found.Document.Source(), nil
}

// withSource prefixes an outcome's detail with where the data came from, for
// the document's events: "source: embedded Order-X COMFORT (order-x.xml)".
func withSource(source, detail string) string {
	if detail == "" {
		return "source: " + source
	}
	return "source: " + source + "; " + strings.TrimSpace(detail)
}
