// Package pricing is the use case of a client's price lists (issue 28):
// import a CSV (validated by pkg/pricelist, stored by pkg/store as one
// replacement), export it, and read the entries that price an order. The
// API, intakectl and the processor call it, so each reads and validates a
// list the same way.
package pricing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pricelist"
	"github.com/docintake/docintake/pkg/store"
)

// Error codes.
const (
	// CodeInvalid: the CSV has problems; details name each by line and
	// column, nothing was stored.
	CodeInvalid = "price_list_invalid"
	// CodeBuyerInvalid: the buyer is not a party id.
	CodeBuyerInvalid = "price_list_buyer_invalid"
)

// CheckBuyer validates a buyer (a party id, "" for every buyer).
func CheckBuyer(buyer string) error {
	if len(buyer) > 200 || strings.TrimSpace(buyer) != buyer || strings.IndexFunc(buyer, unicode.IsControl) >= 0 {
		return document.CodedErrorf(document.EINVALID, CodeBuyerInvalid,
			"buyer %q must be a party id: at most 200 characters, no surrounding spaces or control characters", buyer)
	}
	return nil
}

// Import validates csv and stores it as clientID's price list for buyer
// ("" for every buyer), replacing the list it had; by is who imported it.
// An invalid file is EINVALID (CodeInvalid) with a detail per problem
// ("line 3, column unit_price") and wraps the *pricelist.Error; nothing of
// it is stored.
func Import(ctx context.Context, st *store.Store, clientID, buyer string, csv []byte, by string) (store.PriceListInfo, error) {
	if err := CheckBuyer(buyer); err != nil {
		return store.PriceListInfo{}, err
	}
	entries, err := pricelist.Parse(bytes.NewReader(csv), 0)
	var pe *pricelist.Error
	if errors.As(err, &pe) {
		details := make(map[string]string, len(pe.Problems)+1)
		for _, p := range pe.Problems {
			key := fmt.Sprintf("line %d", p.Line)
			if p.Column != "" {
				key += ", column " + p.Column
			}
			details[key] = p.Message
		}
		if pe.More > 0 {
			details["more"] = fmt.Sprintf("%d more problems", pe.More)
		}
		return store.PriceListInfo{}, &document.Error{Kind: document.EINVALID, Code: CodeInvalid, Message: pe.Error(),
			Details: details, Err: pe}
	}
	if err != nil {
		return store.PriceListInfo{}, err
	}
	sum := sha256.Sum256(csv)
	rows := make([]store.PriceEntry, len(entries))
	for i, e := range entries {
		rows[i] = store.PriceEntry{Buyer: buyer, Line: e.Line, Article: e.Article, ArticleKey: pricelist.ArticleKey(e.Article),
			Currency: e.Currency, UnitPrice: e.UnitPrice, PriceBasis: e.PriceBasis, Unit: e.Unit, UnitCode: e.UnitCode(),
			ValidFrom: dateTime(e.ValidFrom), ValidTo: dateTime(e.ValidTo), TolerancePct: e.TolerancePct}
	}
	return st.ReplacePriceList(ctx, store.PriceListInfo{ClientID: clientID, Buyer: buyer, SHA256: sum[:], ImportedBy: by}, rows)
}

// Export writes clientID's price list for buyer as CSV (what Import reads).
// ENOTFOUND (store.CodePriceListNotFound) when there is none.
func Export(ctx context.Context, st *store.Store, clientID, buyer string, w io.Writer) (store.PriceListInfo, error) {
	info, rows, err := st.PriceList(ctx, clientID, buyer)
	if err != nil {
		return info, err
	}
	return info, pricelist.Write(w, Entries(rows))
}

// Entries turns stored entries into pricelist entries.
func Entries(rows []store.PriceEntry) []pricelist.Entry {
	out := make([]pricelist.Entry, len(rows))
	for i, r := range rows {
		out[i] = pricelist.Entry{Buyer: r.Buyer, Line: r.Line, Article: r.Article, Currency: r.Currency, UnitPrice: r.UnitPrice,
			PriceBasis: r.PriceBasis, Unit: r.Unit, ValidFrom: orderDate(r.ValidFrom), ValidTo: orderDate(r.ValidTo),
			TolerancePct: r.TolerancePct}
	}
	return out
}

func dateTime(d order.Date) *time.Time {
	if d.IsZero() {
		return nil
	}
	t := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
	return &t
}

func orderDate(t *time.Time) order.Date {
	if t == nil {
		return order.Date{}
	}
	return order.DateOf(*t)
}
