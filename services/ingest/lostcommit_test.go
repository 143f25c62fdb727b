package ingest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
	"github.com/docintake/docintake/pkg/observability"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/docintake/docintake/services/ingest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// commitLost is PostgreSQL committing the first upload's row and then
// losing the connection before it answers: CreateDocument fails although
// the row exists.
type commitLost struct {
	*store.Store
	lost bool
}

func (s *commitLost) CreateDocument(ctx context.Context, d document.Document, job store.OutboxRow) (document.Document, bool, error) {
	got, created, err := s.Store.CreateDocument(ctx, d, job)
	if err == nil && !s.lost {
		s.lost = true
		return document.Document{}, false, &document.Error{Kind: document.EUNAVAILABLE, Code: "unavailable",
			Message: "connection reset", Err: errors.New("unexpected EOF")}
	}
	return got, created, err
}

// An upload whose commit answer was lost gets 503; the client's retry is
// answered with that row, so its PDF must still be there (a chaos run lost
// one: ingest deleted the object on any error).
func TestUploadCommitAnswerLost(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	obj := objectstoretest.S3(t)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme"}, store.TokenHash("tok-acme")))
	health := observability.NewHealth(observability.Check{Name: "postgres", Func: st.Ping})
	srv := ingest.New(ingest.Config{MaxUploadBytes: 25 << 20, SubjectPrefix: "intake"}, &commitLost{Store: st}, obj,
		templates{"contoso-po": {"CONTOSO"}}, zaptest.NewLogger(t), prometheus.NewRegistry(), health)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	b := &bundle{url: hs.URL, st: st, obj: obj, router: openAPIRouter(t)}

	f := form{fields: fields("message_id", "lost-1", "subject", "s", "template", "contoso-po"), file: orderPDF}
	first := b.do(t, b.multipart(t, "tok-acme", f))
	require.Equal(t, http.StatusServiceUnavailable, first.status, string(first.raw))
	retry := b.do(t, b.multipart(t, "tok-acme", f))
	require.Equal(t, http.StatusAccepted, retry.status, string(retry.raw))

	d, err := st.DocumentByLogID(ctx, "acme", retry.body["log_id"].(string))
	require.NoError(t, err)
	rc, err := obj.Get(ctx, d.SourceKey)
	require.NoError(t, err, "the accepted document's PDF is gone")
	require.NoError(t, rc.Close())
	require.Equal(t, 1, b.objectCount(t), "the retry's own object was removed again")
}
