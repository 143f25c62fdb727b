package ingest_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/pricelist"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/services/ingest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

const priceHeader = "article,currency,unit_price,price_basis,unit,valid_from,valid_to,tolerance_pct\n"

// priceListsServer serves the price list API for clients acme and globex,
// with changes limited to changes per hour.
func priceListsServer(t *testing.T, changes int) *bundle {
	t.Helper()
	return templatesAPIServer(t, ingest.Config{MaxUploadBytes: 1 << 20}, func(s *ingest.Server, st *store.Store, reg prometheus.Registerer) {
		s.EnablePriceLists(st)
		s.EnableTemplateChangeRateLimit(changes, time.Hour, st, reg)
	}, nil)
}

// csv sends a request whose answer is CSV and returns status and body.
func (b *bundle) csv(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if res.StatusCode == http.StatusOK {
		require.Equal(t, "text/csv; charset=utf-8", res.Header.Get("Content-Type"))
	}
	return res.StatusCode, string(raw)
}

// A client imports, reads, lists and deletes its own price lists with its
// bearer token; another client sees none of them.
func TestPriceListAPI(t *testing.T) {
	t.Parallel()
	b := priceListsServer(t, 100)
	list := priceHeader + "S-100,EUR,1.50,,C62,,,2\nS-200,EUR,25.00,100,,2026-01-01,2026-12-31,\n"

	r := b.do(t, b.req(t, http.MethodPut, "/price-list?buyer=ACME", "tok-acme", "text/csv", []byte(list)))
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	require.Equal(t, "ACME", r.body["buyer"])
	require.EqualValues(t, 2, r.body["entries"])
	require.Equal(t, "client:acme", r.body["imported_by"])
	r = b.do(t, b.req(t, http.MethodPut, "/price-list", "tok-acme", "text/csv; charset=utf-8", []byte(priceHeader+"X-1,USD,9,,,,,\n")))
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	require.Nil(t, r.body["buyer"], "the list for every buyer")

	status, body := b.csv(t, b.req(t, http.MethodGet, "/price-list?buyer=ACME", "tok-acme", "", nil))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, priceHeader+"S-100,EUR,1.50,1,C62,,,2\nS-200,EUR,25.00,100,,2026-01-01,2026-12-31,0\n", body)

	r = b.do(t, b.req(t, http.MethodGet, "/price-lists", "tok-acme", "", nil))
	require.Equal(t, http.StatusOK, r.status)
	require.Len(t, r.body["price_lists"], 2)
	r = b.do(t, b.req(t, http.MethodGet, "/price-lists", "tok-globex", "", nil))
	require.Empty(t, r.body["price_lists"], "another client's lists are not listed")
	r = b.do(t, b.req(t, http.MethodGet, "/price-list?buyer=ACME", "tok-globex", "", nil))
	require.Equal(t, http.StatusNotFound, r.status)
	require.Equal(t, "price_list_not_found", r.body["code"])

	r = b.do(t, b.req(t, http.MethodDelete, "/price-list?buyer=ACME", "tok-globex", "", nil))
	require.Equal(t, http.StatusNotFound, r.status, "nor deleted")
	status, _ = b.csv(t, b.req(t, http.MethodDelete, "/price-list?buyer=ACME", "tok-acme", "", nil))
	require.Equal(t, http.StatusNoContent, status)
	r = b.do(t, b.req(t, http.MethodGet, "/price-list?buyer=ACME", "tok-acme", "", nil))
	require.Equal(t, http.StatusNotFound, r.status)

	for _, path := range []string{"/price-lists", "/price-list"} {
		r = b.do(t, b.req(t, http.MethodGet, path, "wrong", "", nil))
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Equal(t, "unauthorized", r.body["code"])
	}
	r = b.do(t, b.req(t, http.MethodPut, "/price-list", "wrong", "text/csv", []byte(list)))
	require.Equal(t, http.StatusUnauthorized, r.status)
}

// An invalid CSV is 422 price_list_invalid naming each problem by line and
// column, and stores nothing; the body's type, size and the buyer are
// checked; changes count against the client's template change rate.
func TestPriceListAPIRefusals(t *testing.T) {
	t.Parallel()
	b := priceListsServer(t, 5)
	put := func(path, ctype string, body []byte) response {
		return b.do(t, b.req(t, http.MethodPut, path, "tok-acme", ctype, body))
	}
	r := put("/price-list", "text/csv", []byte(priceHeader+"S-1,EUR,1.50,,,,,\n"))
	require.Equal(t, http.StatusOK, r.status, string(r.raw))

	r = put("/price-list", "text/csv", []byte(priceHeader+"S-1,EUR,\"1,50\",,,,,\nS-2,EUR,2,,,2026-02-30,,\nS-3,EUR\n"))
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Equal(t, "price_list_invalid", r.body["code"])
	require.Equal(t, map[string]any{
		"line 2, column unit_price": `"1,50" is not a decimal number: write the decimal point as a dot (1.50)`,
		"line 3, column valid_from": `"2026-02-30" is not a date: write YYYY-MM-DD, or leave it empty for no limit`,
		"line 4":                    "2 columns, want 8 (" + strings.TrimSpace(priceHeader) + ")",
	}, r.body["details"])
	r = put("/price-list", "text/csv", []byte("article,price\nS-1,1\n"))
	require.Equal(t, "price_list_invalid", r.body["code"])
	require.Contains(t, r.body["details"], "line 1")
	status, body := b.csv(t, b.req(t, http.MethodGet, "/price-list", "tok-acme", "", nil))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, priceHeader+"S-1,EUR,1.50,1,,,,0\n", body, "nothing of the invalid lists stored")

	r = put("/price-list", "application/json", []byte(`{}`))
	require.Equal(t, http.StatusUnsupportedMediaType, r.status)
	require.Equal(t, "unsupported_content_type", r.body["code"])

	big := bytes.Repeat([]byte("S-1,EUR,1.50,,,,,\n"), pricelist.DefaultMaxBytes/18+1)
	r = put("/price-list", "text/csv", append([]byte(priceHeader), big...))
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	require.Equal(t, "price_list_too_large", r.body["code"])

	r = b.do(t, b.req(t, http.MethodGet, "/price-list?buyer=%20ACME", "tok-acme", "", nil))
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Equal(t, "price_list_buyer_invalid", r.body["code"])

	// Five changes an hour, the refused ones counted too: this is the sixth.
	r = put("/price-list", "text/csv", []byte(priceHeader+"S-1,EUR,1.60,,,,,\n"))
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Equal(t, "rate_limited", r.body["code"])
}
