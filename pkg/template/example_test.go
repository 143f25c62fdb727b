package template_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docintake/docintake/pkg/template"
)

func Example() {
	dir, _ := os.MkdirTemp("", "templates")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "acme.yml"), []byte(`
keywords: [ACME Corp]
fields:
  order_id: {parser: regex, regex: 'Order (\d+)'}
  date: {parser: regex, regex: 'Date (\S+)', type: date}
  lines:
    parser: lines
    start: Items
    end: Total
    line: '^(?P<buyer_article_id>\S+)\s+(?P<quantity>[\d,]+)\s+(?P<unit>\w+)$'
options: {date_formats: ['%d.%m.%Y'], decimal_separator: ','}
docintake: {name: acme, party_ids: [ACME]}
`), 0o600)
	set, err := template.Load(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	text := "ACME Corp\nOrder 4711\nDate 03.04.2026\nItems\nB-1  2,5  kg\nTotal\n"
	run, err := set.Run(context.Background(), text, template.RunOptions{PartyID: "ACME"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(run.Outcome.Status, run.Order.ID, run.Order.IssueDate)
	it := run.Order.Items[0]
	fmt.Println(it.Position, it.BuyerArticleID, it.Quantity, it.Unit)
	// Output:
	// success 4711 2026-04-03
	// 1 B-1 2.5 kg
}
