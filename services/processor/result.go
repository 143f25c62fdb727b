package processor

import (
	"encoding/json"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
)

// marshalResult renders the result JSON (results/…/<log_id>.json, shaped
// by pkg/resultjson) of doc's order, read from source with template
// version v.
func marshalResult(doc document.Document, v *catalogue.Version, o *order.Order, source string) ([]byte, error) {
	return json.MarshalIndent(resultFile(doc, v, o, source), "", "  ")
}
