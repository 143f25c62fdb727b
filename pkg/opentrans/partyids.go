package opentrans

import "github.com/docintake/docintake/pkg/order"

// otherPartyIDs are the further PARTY_IDs of p (PARTY allows any number):
// each cleaned like the first, empty ones and repeats of the first dropped.
func otherPartyIDs(p *order.Party) []*node {
	var out []*node
	seen := map[string]bool{limit(clean(p.ID), 250): true}
	for _, o := range p.OtherIDs {
		id := limit(clean(o.ID), 250)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, leaf("bmecat:PARTY_ID", id, "type", cleanToken(o.Type, partyIDTypes...)))
	}
	return out
}
