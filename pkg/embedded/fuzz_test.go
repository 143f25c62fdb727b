package embedded_test

import (
	"context"
	"testing"

	"github.com/docintake/docintake/pkg/embedded"
	"github.com/docintake/docintake/pkg/embedded/embeddedtest"
	"github.com/docintake/docintake/pkg/opentrans"
)

// FuzzRecognise: any attachment content is refused or mapped, never a
// panic; a mapped order either writes or is refused with an error by the
// openTRANS writer.
func FuzzRecognise(f *testing.F) {
	f.Add([]byte(peppolOrder))
	for _, b := range embeddedtest.Hostile() {
		if len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`<rsm:SCRDMCCBDACIOMessageStructure xmlns:rsm="urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure:100" xmlns:ram="r"><rsm:ExchangedDocument><ram:ID>1</ram:ID><ram:TypeCode>220</ram:TypeCode></rsm:ExchangedDocument><rsm:SupplyChainTradeTransaction><ram:IncludedSupplyChainTradeLineItem><ram:SpecifiedLineTradeDelivery><ram:RequestedQuantity unitCode="H87">2</ram:RequestedQuantity></ram:SpecifiedLineTradeDelivery></ram:IncludedSupplyChainTradeLineItem></rsm:SupplyChainTradeTransaction></rsm:SCRDMCCBDACIOMessageStructure>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := embedded.Recognise(context.Background(), "fuzz.xml", data)
		if err != nil || d == nil || d.Order == nil {
			return
		}
		_, _ = opentrans.Marshal(d.Order, opentrans.WriteOptions{})
	})
}
