package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/docintake/docintake/pkg/generic"
)

func main() {
	for _, f := range os.Args[1:] {
		out, err := exec.Command("pdftotext", "-layout", f, "-").Output()
		if err != nil {
			fmt.Println(f, err)
			continue
		}
		res, err := generic.Read(context.Background(), string(out), generic.Options{Debug: os.Getenv("D") != ""})
		if err != nil {
			fmt.Println(f, err)
			continue
		}
		o := res.Order
		fmt.Printf("%s: %s | id=%s date=%s cur=%s net=%s tax=%s gross=%s items=%d\n", f, res.Outcome, o.ID, o.IssueDate, o.Currency, o.Totals.NetAmount, o.Totals.TaxAmount, o.Totals.GrossAmount, len(o.Items))
		for _, c := range res.Candidates {
			fmt.Printf("   cand %s=%q p%d l%d c%d %q %v\n", c.Field, c.Value, c.At.Page, c.At.Line+1, c.At.Col, c.Why, c.Kept)
		}
		if os.Getenv("V") != "" {
			for _, it := range o.Items {
				fmt.Printf("   %s | %s | %s x %s /%s = %s  [%s]\n", it.Position, it.BuyerArticleID, it.Quantity, it.UnitPrice, it.PriceBasisQuantity, it.LineAmount, it.Description)
			}
		}
	}
}
