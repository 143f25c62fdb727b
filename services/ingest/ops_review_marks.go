package ingest

import (
	"fmt"

	"github.com/docintake/docintake/pkg/orderflags"
	"github.com/docintake/docintake/pkg/resultjson"
)

// placeFlags puts each flag of the order's checks (issue 28: a price off
// the client's price list, a delivery date before the order or already
// past) at the field it concerns as a warning: the page marks it yellow,
// as it marks what failed red. These are the only per-field findings a
// reading carries; the readers keep no certainty per value, so none is
// shown.
func (v *reviewView) placeFlags(flags []resultjson.Flag) {
	at := v.fieldsByName()
	for _, f := range flags {
		name := flagField(f)
		if fl := at[name]; fl != nil {
			if fl.Warning != "" {
				fl.Warning += "; "
			}
			fl.Warning += f.Message
		}
	}
}

// flagField is the input a flag concerns: a line's price, a line's
// position for its delivery date (the form has no column for it), the
// order's delivery date.
func flagField(f resultjson.Flag) string {
	switch {
	case f.Line > 0 && (f.Kind == orderflags.KindPrice || f.Kind == orderflags.KindPriceNoEntry):
		return fmt.Sprintf("i%d.unit_price", f.Line-1)
	case f.Line > 0:
		return fmt.Sprintf("i%d.position", f.Line-1)
	}
	return "delivery_date"
}
