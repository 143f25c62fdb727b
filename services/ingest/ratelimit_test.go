package ingest_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

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

// The upload limit is per client and shared by every ingest replica (the
// count is in PostgreSQL): two replicas together accept the limit, then
// answer 429 rate_limited with Retry-After, as openapi.yaml documents,
// without storing anything; another client is unaffected.
func TestUploadRateLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	obj := objectstoretest.S3(t)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme"}, store.TokenHash("tok-acme")))
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "globex"}, store.TokenHash("tok-globex")))
	const limit, window = 3, 24 * time.Hour // windows start at UTC midnight: a run never straddles one in practice
	var replicas []*bundle
	for range 2 {
		reg := prometheus.NewRegistry()
		srv := ingest.New(ingest.Config{SubjectPrefix: "intake"}, st, obj, templates{"contoso-po": {"CONTOSO"}},
			zaptest.NewLogger(t), reg, observability.NewHealth())
		srv.EnableUploadRateLimit(limit, window, st, reg)
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		replicas = append(replicas, &bundle{url: hs.URL, st: st, obj: obj, router: openAPIRouter(t)})
	}
	upload := func(b *bundle, token, mid string) response {
		return b.do(t, b.multipart(t, token, form{fields: fields("message_id", mid, "subject", "s", "template", "contoso-po"), file: orderPDF}))
	}
	for i := range limit {
		res := upload(replicas[i%2], "tok-acme", "m"+strconv.Itoa(i))
		require.Equal(t, http.StatusAccepted, res.status, string(res.raw))
	}
	req := replicas[0].multipart(t, "tok-acme", form{fields: fields("message_id", "over", "subject", "s", "template", "contoso-po"), file: orderPDF})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	retry, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, retry >= 1 && retry <= int(window/time.Second), "Retry-After %d within the window", retry)

	over := upload(replicas[1], "tok-acme", "over")
	require.Equal(t, http.StatusTooManyRequests, over.status)
	require.Equal(t, "rate_limited", over.body["code"])
	_, err = st.DocumentByMessageID(ctx, "acme", "over")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err), "a refused upload stores nothing")
	require.Equal(t, 1.0, scrape(t, replicas[1].url+"/metrics")["docintake_ingest_rate_limited_total"].GetMetric()[0].GetCounter().GetValue())

	require.Equal(t, http.StatusAccepted, upload(replicas[1], "tok-globex", "g1").status, "the limit is per client")
	require.Equal(t, http.StatusNotFound, replicas[0].get(t, "tok-acme", "00000000-0000-0000-0000-000000000000").status,
		"reading documents is not limited")
}
