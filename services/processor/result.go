package processor

import (
	"encoding/hex"
	"encoding/json"

	"github.com/docintake/docintake/pkg/catalogue"
	"github.com/docintake/docintake/pkg/document"
	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/resultjson"
)

// marshalResult renders the result JSON (results/…/<log_id>.json, shaped
// by pkg/resultjson) of doc's order, read from source with template
// version v.
func marshalResult(doc document.Document, v *catalogue.Version, o *order.Order, source string) ([]byte, error) {
	return json.MarshalIndent(resultjson.File{LogID: doc.LogID, MessageID: doc.MessageID, Template: doc.Template,
		TemplateVersion: v.Number, TemplateSHA256: hex.EncodeToString(v.SHA256), TemplateClient: v.ClientID,
		ResultMode: string(doc.ResultMode), Source: source, Order: resultjson.OrderOf(o)}, "", "  ")
}
