package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"
)

// The review page's images: drawn from the document's source PDF by
// pdftext in its sandbox, on first view, and kept in the object store
// beside the document's results (results/…/<log_id>.review-layout.json
// and .review-page-N.png, under the results' retention), so the next view
// reads them back instead of running poppler again. They are served by the
// console itself: a browser never gets a storage URL.

// maxSourceBytes bounds a source PDF read for drawing (uploads are
// smaller; INTAKE_MAX_UPLOAD_BYTES).
const maxSourceBytes = 128 << 20

func layoutKey(d document.Document) string {
	return objectstore.ResultKey(d.LogID, d.CreatedAt, "review-layout.json")
}

func pageKey(d document.Document, n int) string {
	return objectstore.ResultKey(d.LogID, d.CreatedAt, "review-page-"+strconv.Itoa(n)+".png")
}

// layout returns the document's page layout, from the object store or
// drawn now.
func (r *reviewer) layout(ctx context.Context, d document.Document) (*pdftext.Layout, error) {
	if b, ok := r.cached(ctx, layoutKey(d)); ok {
		var l pdftext.Layout
		if err := json.Unmarshal(b, &l); err == nil {
			return &l, nil
		}
	}
	pdf, err := r.source(ctx, d)
	if err != nil {
		return nil, err
	}
	var l *pdftext.Layout
	err = r.limited(ctx, func() error {
		l, err = pdftext.RenderLayout(ctx, pdf, r.cfg.Render)
		return err
	})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("encode layout: %w", err)
	}
	r.keep(ctx, layoutKey(d), "application/json", b)
	return l, nil
}

// pageImage returns page n of the document as PNG, from the object store
// or drawn now. ENOTFOUND for a page the layout does not draw.
func (r *reviewer) pageImage(ctx context.Context, d document.Document, n int) ([]byte, error) {
	if b, ok := r.cached(ctx, pageKey(d, n)); ok {
		return b, nil
	}
	l, err := r.layout(ctx, d)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > len(l.Pages) || l.Pages[n-1].DPI == 0 {
		return nil, document.Errorf(document.ENOTFOUND, "page %d of %s is not drawn", n, d.LogID)
	}
	pdf, err := r.source(ctx, d)
	if err != nil {
		return nil, err
	}
	var img []byte
	err = r.limited(ctx, func() error {
		img, err = pdftext.RenderPage(ctx, pdf, n, l.Pages[n-1].DPI, r.cfg.Render)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.keep(ctx, pageKey(d, n), "image/png", img)
	return img, nil
}

// limited runs fn when one of the Renders slots is free: a burst of page
// requests starts a few poppler programs, not one each.
func (r *reviewer) limited(ctx context.Context, fn func() error) error {
	select {
	case r.renders <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.renders }()
	return fn()
}

func (r *reviewer) source(ctx context.Context, d document.Document) ([]byte, error) {
	rc, err := r.objects().Get(ctx, d.SourceKey)
	if err != nil {
		return nil, fmt.Errorf("source of %s: %w", d.LogID, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxSourceBytes+1))
	if err != nil {
		return nil, fmt.Errorf("source of %s: %w", d.LogID, err)
	}
	if len(b) > maxSourceBytes {
		return nil, document.Errorf(document.EINVALID, "the source of %s is larger than %d MiB", d.LogID, maxSourceBytes>>20)
	}
	return b, nil
}

// cached reads a drawn object; a miss (or a store error, logged) is drawn
// again.
func (r *reviewer) cached(ctx context.Context, key string) ([]byte, bool) {
	rc, err := r.objects().Get(ctx, key)
	if err != nil {
		if document.ErrorKind(err) != document.ENOTFOUND {
			r.ops.logger.Warn("review: read drawn page", zap.String("key", key), zap.Error(err))
		}
		return nil, false
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxSourceBytes))
	if err != nil {
		return nil, false
	}
	return b, true
}

// keep stores a drawn object; failing to is logged, not shown: the page
// is drawn again next time.
func (r *reviewer) keep(ctx context.Context, key, ct string, b []byte) {
	if err := r.objects().Put(ctx, key, bytes.NewReader(b), int64(len(b)), ct); err != nil {
		r.ops.logger.Warn("review: keep drawn page", zap.String("key", key), zap.Error(err))
	}
}

// handlePageImage serves page :n of a document the operator may see.
func (r *reviewer) handlePageImage(c echo.Context) error {
	d, err := r.document(c)
	if err != nil {
		return r.imageError(c, err)
	}
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil {
		return c.String(http.StatusNotFound, "no such page\n")
	}
	img, err := r.pageImage(c.Request().Context(), d, n)
	if err != nil {
		return r.imageError(c, err)
	}
	return c.Blob(http.StatusOK, "image/png", img)
}

// imageError answers a page image that cannot be drawn with a short text
// (the page shows the image's alternative text and says so).
func (r *reviewer) imageError(c echo.Context, err error) error {
	switch document.ErrorKind(err) {
	case document.ENOTFOUND:
		return c.String(http.StatusNotFound, "no such page\n")
	case document.EINVALID:
		return c.String(http.StatusUnprocessableEntity, "the page cannot be drawn\n")
	}
	r.ops.logger.Warn("review: draw page", zap.String("path", c.Request().URL.Path), zap.Error(err))
	return c.String(http.StatusUnprocessableEntity, "the page cannot be drawn within the limits\n")
}
