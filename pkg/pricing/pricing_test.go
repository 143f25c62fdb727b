package pricing_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/pricelist"
	"github.com/docintake/docintake/pkg/pricing"
	"github.com/docintake/docintake/pkg/store"
	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

const header = "article,currency,unit_price,price_basis,unit,valid_from,valid_to,tolerance_pct\n"

// An import replaces the buyer's list as a whole and leaves other buyers'
// lists alone; an invalid file stores nothing and names every problem; the
// export reads back as the same list; one statement reads what an order's
// check needs, with the client's flag policy.
func TestImportReplaceExport(t *testing.T) {
	t.Parallel()
	st := storetest.Store(t)
	ctx := t.Context()
	require.NoError(t, st.UpsertClient(ctx, document.Client{ID: "acme", WebhookURL: "http://127.0.0.1:1/h"}))

	first := header + "S-100,EUR,1.50,,C62,,,2\nS-200,EUR,25.00,100,,2026-01-01,,\n"
	info, err := pricing.Import(ctx, st, "acme", "", []byte(first), "test")
	require.NoError(t, err)
	require.Equal(t, 2, info.Entries)
	_, err = pricing.Import(ctx, st, "acme", "ACME", []byte(header+"b-1,EUR,1.60,,,,,\n"), "test")
	require.NoError(t, err)

	// Replace: S-200 is gone, S-100 has its new price.
	_, err = pricing.Import(ctx, st, "acme", "", []byte(header+"S-100,EUR,1.55,,C62,,,2\n"), "test")
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = pricing.Export(ctx, st, "acme", "", &out)
	require.NoError(t, err)
	require.Equal(t, header+"S-100,EUR,1.55,1,C62,,,2\n", out.String())

	// Invalid: nothing stored, every problem named.
	_, err = pricing.Import(ctx, st, "acme", "", []byte(header+"S-100,EUR,1;55,,C62,,,2\nS-300,EUR,2,,,2026-02-30,,\n"), "test")
	require.Equal(t, pricing.CodeInvalid, errCode(err))
	var pe *pricelist.Error
	require.True(t, errors.As(err, &pe))
	de, _ := document.AsError(err)
	require.Equal(t, map[string]string{
		"line 2, column unit_price": `"1;55" is not a decimal number (digits and one dot, no thousands separators or currency)`,
		"line 3, column valid_from": `"2026-02-30" is not a date: write YYYY-MM-DD, or leave it empty for no limit`,
	}, de.Details)
	out.Reset()
	_, err = pricing.Export(ctx, st, "acme", "", &out)
	require.NoError(t, err)
	require.Equal(t, header+"S-100,EUR,1.55,1,C62,,,2\n", out.String(), "the list before the invalid import")

	policy, rows, err := st.PriceCheck(ctx, "acme", "ACME", []string{"S-100", "B-1", "X"})
	require.NoError(t, err)
	require.Equal(t, document.FlagsDeliver, policy)
	got := pricing.Entries(rows)
	require.Len(t, got, 2)
	byBuyer := map[string]string{}
	for _, e := range got {
		byBuyer[e.Buyer] = e.Article + " " + e.UnitPrice
	}
	require.Equal(t, map[string]string{"": "S-100 1.55", "ACME": "b-1 1.60"}, byBuyer)

	require.NoError(t, st.SetFlagPolicy(ctx, "acme", document.FlagsReview))
	policy, rows, err = st.PriceCheck(ctx, "acme", "OTHER", []string{"B-1"})
	require.NoError(t, err)
	require.Equal(t, document.FlagsReview, policy)
	require.Empty(t, rows, "another buyer's list is not this buyer's")

	lists, err := st.PriceLists(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, lists, 2)
	require.NoError(t, st.DeletePriceList(ctx, "acme", "ACME"))
	require.Equal(t, store.CodePriceListNotFound, errCode(st.DeletePriceList(ctx, "acme", "ACME")))
	_, err = pricing.Import(ctx, st, "nobody", "", []byte(first), "test")
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
	_, _, err = st.PriceCheck(ctx, "nobody", "", nil)
	require.Equal(t, document.ENOTFOUND, document.ErrorKind(err))
	require.Equal(t, pricing.CodeBuyerInvalid, errCode(pricing.CheckBuyer(" ACME")))
}

func errCode(err error) string {
	if e, ok := document.AsError(err); ok {
		return e.Code
	}
	return ""
}
