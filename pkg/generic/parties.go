package generic

import (
	"regexp"
	"strings"

	"github.com/docintake/docintake/pkg/order"
)

// partyLabels head the address blocks the reader keeps, by role. A
// heading is a cell of its own ("SHIP TO", "Lieferadresse:"); the block is
// the text under it in its column.
var partyLabels = []struct {
	role order.Role
	re   *regexp.Regexp
}{
	{order.RoleDelivery, labelRE(`ship(?:ped)?\s+to`, `deliver(?:y)?\s+to`, `delivery\s+address`, `shipping\s+address`,
		`send\s+goods\s+to`, `consignee(?:\s*\(ship\s+to\))?`, `lieferadresse`, `lieferanschrift`, `warenempfanger`,
		`adresse\s+de\s+livraison`, `lieu\s+de\s+livraison`, `livrer\s+a`, `(?:af)?leveradres`, `afleveren\s+(?:op|aan)`,
		`direccion\s+de\s+entrega`, `lugar\s+de\s+entrega`, `indirizzo\s+di\s+consegna`, `luogo\s+di\s+consegna`)},
	{order.RoleInvoice, labelRE(`bill\s+to`, `invoices?\s+to`, `invoice\s+address`, `rechnungs(?:adresse|anschrift|empfanger)`,
		`adresse\s+de\s+facturation`, `factuuradres`, `direccion\s+de\s+facturacion`, `indirizzo\s+di\s+fatturazione`)},
	{order.RoleSupplier, labelRE(`vendor`, `supplier`, `seller`, `ordered\s+from`, `purchased\s+from`, `lieferant`,
		`auftragnehmer`, `fournisseur`, `vendeur`, `leverancier`, `proveedor`, `fornitore`)},
}

// maxBlockLines bounds an address block: a heading over a long column of
// text (terms) is not an address.
const maxBlockLines = 6

// readParties keeps the address blocks under party headings: the delivery
// address, the invoice recipient and the supplier, as printed line by line
// (the first line as the name). Blocks printed side by side are cut at the
// next heading's column. Each role is read once, from its first heading.
func (r *reader) readParties() {
	seen := map[order.Role]bool{}
	for i, l := range r.d.lines {
		if r.hdr != nil && i >= r.hdr.first {
			return // below the item table's header are items and totals
		}
		for ci, c := range l.cells {
			for _, pl := range partyLabels {
				if _, rest, ok := matchLabel(pl.re, c); !ok || rest != "" || seen[pl.role] {
					continue
				}
				if lines, at := r.block(i, ci); len(lines) > 0 {
					seen[pl.role] = true
					r.order.Parties = append(r.order.Parties, order.Party{Role: pl.role, Address: order.Address{Name: lines[0], Lines: lines}})
					at.Label = c.text
					r.keep("party."+string(pl.role), strings.Join(lines, ", "), at)
				}
			}
		}
	}
}

// block reads the text under the heading in cell ci of line i, up to the
// next heading's column on that line, until a blank line or another label.
func (r *reader) block(i, ci int) ([]string, Position) {
	l := r.d.lines[i]
	c := l.cells[ci]
	// Blocks side by side split halfway between their headings: the
	// text under a heading starts a little left or right of it.
	left, right := c.col-2, c.col+50
	if ci > 0 {
		left = (l.cells[ci-1].end + c.col) / 2
	}
	if ci+1 < len(l.cells) {
		right = (c.end + l.cells[ci+1].col) / 2
	}
	var out []string
	var at Position
	for j := i + 1; j < len(r.d.lines) && len(out) < maxBlockLines; j++ {
		b := r.d.lines[j]
		if b.page != l.page || r.hdr != nil && j >= r.hdr.first {
			break
		}
		var parts []string
		for _, bc := range b.cells {
			if bc.col >= left && bc.col < right {
				if anyLabel(bc) || isPartyLabel(bc) {
					return out, at
				}
				parts = append(parts, bc.text)
			}
		}
		if len(parts) == 0 {
			break
		}
		if len(out) == 0 {
			at = b.at(max(left, 0), right, "")
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out, at
}

func isPartyLabel(c cell) bool {
	for _, pl := range partyLabels {
		if _, rest, ok := matchLabel(pl.re, c); ok && rest == "" {
			return true
		}
	}
	return false
}
