package intakectl_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/opentrans/opentranstest"
	"github.com/stretchr/testify/require"
)

// extract --generic's usage and exit codes that do not depend on how well
// the reader reads: 2 for usage (templates given, an output it does not
// print), 1 for a file that cannot be read, 3 for a Factur-X invoice (its
// attachment decides, as in the processor).
func TestExtractGenericUsageAndExitCodes(t *testing.T) {
	t.Parallel()
	invoice := sharedDir(t, "corpus", "other", "mustang-invoice-103767.pdf")
	for _, args := range [][]string{
		{"--templates", t.TempDir(), invoice},
		{"--party-id", "ACME", invoice},
		{"--output", "text", invoice},
		{},
	} {
		r := run(t, append([]string{"extract", "--generic"}, args...)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout, args)
	}

	r := run(t, "extract", "--generic", "--output", "xml", filepath.Join(t.TempDir(), "missing.pdf"))
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "missing.pdf")

	r = run(t, "extract", "--generic", "--output", "xml", invoice)
	require.Equal(t, 3, r.code, r.stderr)
	require.Empty(t, r.stdout)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(r.stderr)), &line), r.stderr)
	require.Equal(t, "rejected", line["status"])
	require.Equal(t, "not_an_order", line["status_reason"])
}

// extract --generic reads a purchase order without templates: exit 0 with
// the openTRANS result, the order as the result JSON carries it, and in
// debug every candidate and kept field with its position; a text-only
// invoice is exit 3, rejected not_an_order by the reader.
func TestExtractGenericReads(t *testing.T) {
	t.Parallel()
	po := sharedDir(t, "corpus", "orders", "contoso-po-Adatum-Adel.pdf")
	invoice := sharedDir(t, "corpus", "invoice2data", "tests", "compare", "AmazonWebServices.pdf")

	r := run(t, "extract", "--generic", "--output", "xml", invoice)
	require.Equal(t, 3, r.code, r.stderr)
	require.Contains(t, r.stderr, `"status_reason":"not_an_order"`)

	r = run(t, "extract", "--generic", "--output", "xml", po)
	require.Equal(t, 0, r.code, r.stderr)
	opentranstest.Validate(t, []byte(r.stdout))
	o, err := opentrans.Read(strings.NewReader(r.stdout))
	require.NoError(t, err)
	// As printed: PO # 190122, DATE 7/27/2019, 89 × 62.00 = 5,518.00 and
	// 11 × 22.00 = 242.00.
	require.Equal(t, "190122", o.ID)
	require.Equal(t, "2019-07-27", o.IssueDate.String())
	require.Len(t, o.Items, 2)
	require.Equal(t, [3]string{"89", "62.00", "5518.00"}, [3]string{o.Items[0].Quantity, o.Items[0].UnitPrice, o.Items[0].LineAmount})
	require.Equal(t, [3]string{"11", "22.00", "242.00"}, [3]string{o.Items[1].Quantity, o.Items[1].UnitPrice, o.Items[1].LineAmount})

	r = run(t, "extract", "--generic", po, invoice) // json is the default output; the highest code wins
	require.Equal(t, 3, r.code, r.stderr)
	var list []struct {
		File         string  `json:"file"`
		Status       string  `json:"status"`
		StatusReason *string `json:"status_reason"`
		Order        *struct {
			OrderID string `json:"order_id"`
			Items   []struct {
				Quantity string `json:"quantity"`
			} `json:"items"`
		} `json:"order"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list), r.stdout)
	require.Len(t, list, 2)
	require.Equal(t, po, list[0].File)
	require.Equal(t, "success", list[0].Status)
	require.Nil(t, list[0].StatusReason)
	require.Equal(t, "190122", list[0].Order.OrderID)
	require.Len(t, list[0].Order.Items, 2)
	require.Equal(t, "rejected", list[1].Status)
	require.Equal(t, "not_an_order", *list[1].StatusReason)

	r = run(t, "extract", "--generic", "--output", "debug", po)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "== candidates")
	require.Contains(t, r.stdout, "== fields")
	require.Regexp(t, `(?m)^order_id\s+"190122"\s+p1 l\d+ c\d+-\d+\s+PO #`, r.stdout, "the order id, where it was read and its label")
	require.Contains(t, r.stdout, "== outcome: success")
}
