// Package embedded reads the business document a PDF carries as an
// attachment (PDF/A-3 associated file): Order-X orders, order changes and
// order responses and UBL 2.1 orders become a canonical order.Order with
// every value the standard carries; Factur-X, ZUGFeRD (1.0 and 2.x),
// XRechnung and UBL invoices and credit notes are recognised so that an
// order template can reject them with certainty.
//
// Documents are recognised by their XML root element, its namespace and the
// guideline they declare, never by the attachment's file name. Attachments
// are attacker controlled: pdftext.Attachments bounds their count, size and
// reading time, and the XML reader here refuses DTDs and bounds nesting and
// element count (see parseXML).
package embedded

import (
	"context"
	"fmt"
	"strings"

	"github.com/docintake/docintake/pkg/order"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
)

// Kind is what an attached business document is.
type Kind string

// Kinds of recognised documents.
const (
	KindOrder         Kind = "order"
	KindOrderChange   Kind = "order_change"
	KindOrderResponse Kind = "order_response"
	KindInvoice       Kind = "invoice"
	KindCreditNote    Kind = "credit_note"
)

// IsOrder reports whether k is one of the order messages (order, change,
// response), which are mapped to an order.Order.
func (k Kind) IsOrder() bool {
	return k == KindOrder || k == KindOrderChange || k == KindOrderResponse
}

// DocumentType is the canonical document type of k: invoices and credit
// notes are both order.TypeInvoice.
func (k Kind) DocumentType() order.DocumentType {
	switch k {
	case KindOrder:
		return order.TypeOrder
	case KindOrderChange:
		return order.TypeOrderChange
	case KindOrderResponse:
		return order.TypeOrderResponse
	}
	return order.TypeInvoice
}

// Standard names.
const (
	StandardOrderX    = "Order-X"
	StandardUBL       = "UBL"
	StandardFacturX   = "Factur-X"
	StandardZUGFeRD   = "ZUGFeRD"
	StandardZUGFeRD1  = "ZUGFeRD 1.0"
	StandardXRechnung = "XRechnung"
	// StandardEN16931 is a CII invoice declaring only EN 16931
	// (urn:cen.eu:en16931:2017): Factur-X 1.0 and ZUGFeRD 2.1+ are the same
	// format there and the XML does not say which.
	StandardEN16931 = "Factur-X/ZUGFeRD"
	StandardCII     = "CII" // a CII invoice with another guideline
)

// Document is one recognised attachment.
type Document struct {
	File     string // the attachment's name in the PDF, for people only
	Standard string // Order-X, UBL, Factur-X, ZUGFeRD, ZUGFeRD 1.0, XRechnung, CII
	Profile  string // BASIC, COMFORT, EXTENDED, EN16931, … ("" when none is declared)
	Kind     Kind
	TypeCode string // the document's type code (220, 230, 231, 380, 381, …)
	ID       string // the document's own id
	// Order is the mapped document for order kinds; nil for invoices.
	Order *order.Order
	XML   []byte
}

// Source says where the data came from, for events, the debug view and the
// result JSON: `embedded Order-X COMFORT (order-x.xml)`.
func (d *Document) Source() string {
	s := "embedded " + d.Standard
	if d.Profile != "" {
		s += " " + d.Profile
	}
	if d.Kind != KindOrder {
		s += " " + strings.ReplaceAll(string(d.Kind), "_", " ")
	}
	return s + " (" + d.File + ")"
}

// Note is what became of one attachment.
type Note struct {
	File   string
	Result string // "Order-X COMFORT order", "not XML", "skipped: larger than …", "refused: hostile xml: …"
}

// Found is the outcome of looking into a PDF's attachments.
type Found struct {
	// Document is the recognised business document: the first order
	// message, else the first invoice or credit note; nil when none.
	Document    *Document
	Attachments []Note
}

// Limits bound the search (see pdftext.AttachmentLimits).
type Limits = pdftext.AttachmentLimits

// Errors of Find for the PDF as a whole (pdftext's, re-exported so callers
// need not import the text package).
var (
	ErrUnreadable  = pdftext.ErrUnreadable
	ErrTimeout     = pdftext.ErrTimeout
	ErrUnavailable = pdftext.ErrUnavailable
)

// Find reads pdf's attachments and recognises the business document among
// them. Attachments that are not XML, not a known standard, too large or
// hostile are listed in Found.Attachments and otherwise ignored: the PDF's
// text is then read as if they were absent. The error is non-nil only when
// the PDF itself cannot be read (pdftext.ErrUnreadable, ErrTimeout,
// ErrUnavailable) or ctx ends.
func Find(ctx context.Context, pdf []byte, lim Limits) (*Found, error) {
	atts, err := pdftext.Attachments(ctx, pdf, lim)
	if err != nil {
		return nil, err
	}
	f := &Found{}
	for _, a := range atts {
		if a.Skipped != "" {
			f.Attachments = append(f.Attachments, Note{a.Name, "skipped: " + a.Skipped})
			continue
		}
		d, err := Recognise(ctx, a.Name, a.Data)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			f.Attachments = append(f.Attachments, Note{a.Name, "refused: " + err.Error()})
			continue
		}
		if d == nil {
			f.Attachments = append(f.Attachments, Note{a.Name, "not a recognised business document"})
			continue
		}
		f.Attachments = append(f.Attachments, Note{a.Name, strings.TrimPrefix(d.Source(), "embedded ")})
		if f.Document == nil || (d.Kind.IsOrder() && !f.Document.Kind.IsOrder()) {
			f.Document = d
		}
	}
	return f, nil
}

// Recognise parses one attachment and, when it is a known business
// document, maps it. It returns nil and no error for XML of another kind
// and for data that is not XML at all; an error for XML that is refused
// (ErrHostile), malformed, or whose values cannot be mapped.
func Recognise(ctx context.Context, name string, data []byte) (*Document, error) {
	if !looksLikeXML(data) {
		return nil, nil
	}
	root, err := parseXML(ctx, data)
	if err != nil {
		return nil, err
	}
	d := &Document{File: name, XML: data}
	ns := root.ns()
	switch {
	case root.name == "SCRDMCCBDACIOMessageStructure" && strings.HasPrefix(ns, "urn:un:unece:uncefact:data:SCRDMCCBDACIOMessageStructure"):
		err = readOrderX(d, root)
	case root.name == "CrossIndustryInvoice" && strings.HasPrefix(ns, "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice"):
		readCII(d, root)
	case root.name == "CrossIndustryDocument" && strings.HasPrefix(ns, "urn:ferd:CrossIndustryDocument"):
		d.Standard, d.Kind = StandardZUGFeRD1, KindInvoice
		d.Profile = guidelineProfile(root.str("SpecifiedExchangedDocumentContext", "GuidelineSpecifiedDocumentContextParameter", "ID"))
		d.TypeCode, d.ID = root.str("HeaderExchangedDocument", "TypeCode"), root.str("HeaderExchangedDocument", "ID")
		if d.TypeCode == "381" {
			d.Kind = KindCreditNote
		}
	case root.name == "Invoice" && ns == "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2":
		d.Standard, d.Kind, d.ID, d.TypeCode = StandardUBL, KindInvoice, root.str("ID"), root.str("InvoiceTypeCode")
		d.Profile = ublProfile(root.str("CustomizationID"))
	case root.name == "CreditNote" && ns == "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2":
		d.Standard, d.Kind, d.ID, d.TypeCode = StandardUBL, KindCreditNote, root.str("ID"), root.str("CreditNoteTypeCode")
		d.Profile = ublProfile(root.str("CustomizationID"))
	case root.name == "Order" && ns == "urn:oasis:names:specification:ubl:schema:xsd:Order-2":
		err = readUBLOrder(d, root)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", d.Standard, d.Kind, err)
	}
	return d, nil
}

// looksLikeXML accepts data whose first non-blank character (after a UTF-8
// byte order mark) is '<'; PDFs, images and spreadsheets are skipped without
// parsing.
func looksLikeXML(data []byte) bool {
	s := strings.TrimPrefix(string(data[:min(len(data), 512)]), "\ufeff")
	s = strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(s, "<")
}

// readCII classifies a CrossIndustryInvoice by its guideline: XRechnung,
// Factur-X (profile from urn:…factur-x.eu:1p0:PROFILE), ZUGFeRD 2.x, or
// plain EN 16931 CII.
func readCII(d *Document, root *elem) {
	d.Kind = KindInvoice
	ex := root.kid("ExchangedDocument")
	d.TypeCode, d.ID = ex.str("TypeCode"), ex.str("ID")
	if d.TypeCode == "381" {
		d.Kind = KindCreditNote
	}
	g := root.str("ExchangedDocumentContext", "GuidelineSpecifiedDocumentContextParameter", "ID")
	lg := strings.ToLower(g)
	switch {
	case strings.Contains(lg, "xrechnung"):
		d.Standard = StandardXRechnung
		if i := strings.Index(lg, "xrechnung_"); i >= 0 {
			d.Profile = g[i+len("xrechnung_"):]
		}
	case strings.Contains(lg, "factur-x.eu"):
		d.Standard, d.Profile = StandardFacturX, guidelineProfile(g)
	case strings.Contains(lg, "zugferd"):
		d.Standard, d.Profile = StandardZUGFeRD, guidelineProfile(g)
	case strings.HasPrefix(lg, "urn:cen.eu:en16931:2017"):
		d.Standard, d.Profile = StandardEN16931, "EN16931"
	default:
		d.Standard = StandardCII
	}
}

// guidelineProfile is the last ":"-separated part of a guideline id in
// upper case ("urn:order-x.eu:1p0:comfort" → COMFORT).
func guidelineProfile(g string) string {
	g = strings.TrimSpace(g)
	if g == "" {
		return ""
	}
	if i := strings.Index(g, "#"); i >= 0 {
		g = g[i+1:]
	}
	parts := strings.Split(g, ":")
	return strings.ToUpper(parts[len(parts)-1])
}

// ublProfile names the Peppol specification a UBL document declares.
func ublProfile(customization string) string {
	c := strings.ToLower(customization)
	switch {
	case strings.Contains(c, "poacc:trns:order:3"):
		return "Peppol BIS Ordering 3"
	case strings.Contains(c, "xrechnung"):
		return "XRechnung"
	case strings.Contains(c, "peppol.eu:2017:poacc:billing:3"), strings.Contains(c, "poacc:billing:3"):
		return "Peppol BIS Billing 3"
	}
	return ""
}

// Structured is d as the template engine takes it (Set.RunStructured).
func (d *Document) Structured() *template.Structured {
	return &template.Structured{Source: d.Source(), Type: d.Kind.DocumentType(), Order: d.Order, Text: string(d.XML)}
}
