package ingest

import (
	"bytes"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/pricelist"
	"github.com/docintake/docintake/pkg/pricing"
	"github.com/docintake/docintake/pkg/store"
	"github.com/labstack/echo/v4"
)

// codePriceListTooLarge (413): a price list over pricelist.DefaultMaxBytes.
const codePriceListTooLarge = "price_list_too_large"

// priceListsAPI serves a client's own price lists (issue 28,
// docs/orders.md): the same validation and replacement as `intakectl
// pricelist import`, scoped to the caller. The buyer is the query
// parameter buyer; absent, the list for every buyer.
type priceListsAPI struct {
	st *store.Store
}

// EnablePriceLists adds GET /price-lists and GET/PUT/DELETE /price-list.
func (s *Server) EnablePriceLists(st *store.Store) {
	if st == nil {
		panic("ingest.EnablePriceLists: nil store")
	}
	s.priceListRoutes(&priceListsAPI{st: st})
}

// priceListSummary is one entry of GET /price-lists and PUT's answer.
type priceListSummary struct {
	Buyer      *string   `json:"buyer"` // null: the list for every buyer
	Entries    int       `json:"entries"`
	SHA256     string    `json:"sha256"`
	ImportedBy string    `json:"imported_by"`
	ImportedAt time.Time `json:"imported_at"`
}

func priceListOf(p store.PriceListInfo) priceListSummary {
	return priceListSummary{Buyer: orNull(p.Buyer), Entries: p.Entries, SHA256: hex.EncodeToString(p.SHA256),
		ImportedBy: p.ImportedBy, ImportedAt: p.ImportedAt}
}

// buyer is the request's buyer, validated.
func buyer(c echo.Context) (string, error) {
	b := c.QueryParam("buyer")
	return b, pricing.CheckBuyer(b)
}

func (a *priceListsAPI) handleList(c echo.Context) error {
	lists, err := a.st.PriceLists(c.Request().Context(), clientFrom(c).ID)
	if err != nil {
		return err
	}
	out := make([]priceListSummary, 0, len(lists))
	for _, l := range lists {
		out = append(out, priceListOf(l))
	}
	return c.JSON(http.StatusOK, map[string]any{"price_lists": out})
}

func (a *priceListsAPI) handleGet(c echo.Context) error {
	b, err := buyer(c)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if _, err := pricing.Export(c.Request().Context(), a.st, clientFrom(c).ID, b, &out); err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", out.Bytes())
}

// handlePut replaces the caller's list for the buyer with the body's CSV:
// 422 price_list_invalid (details per line and column, nothing stored),
// 413 price_list_too_large before the rest of an oversized body is read.
func (a *priceListsAPI) handlePut(c echo.Context) error {
	b, err := buyer(c)
	if err != nil {
		return err
	}
	switch ct, _, _ := mime.ParseMediaType(c.Request().Header.Get("Content-Type")); ct {
	case "text/csv", "application/csv", "text/plain":
	default:
		return document.CodedErrorf(document.EUNSUPPORTED, codeUnsupportedContent, "send the price list as text/csv")
	}
	over := tooLargeCode(codePriceListTooLarge, "the price list", pricelist.DefaultMaxBytes)
	body, err := capBody(c, pricelist.DefaultMaxBytes, over)
	var csv []byte
	if err == nil {
		csv, err = io.ReadAll(body)
	}
	if err != nil {
		return bodyError(c, err, over)
	}
	cl := clientFrom(c)
	info, err := pricing.Import(c.Request().Context(), a.st, cl.ID, b, csv, "client:"+cl.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, priceListOf(info))
}

func (a *priceListsAPI) handleDelete(c echo.Context) error {
	b, err := buyer(c)
	if err != nil {
		return err
	}
	if err := a.st.DeletePriceList(c.Request().Context(), clientFrom(c).ID, b); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
