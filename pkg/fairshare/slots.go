package fairshare

import "time"

// Slots counts a pool's slots per tenant and decides who is served next
// under a Policy. It is not safe for concurrent use: its owner (Gate, a
// queue) holds its own lock around it.
type Slots struct {
	size, share, burst int
	used, burstUsed    int
	held               map[string]int
}

// NewSlots returns the counts of a pool of size slots (at least one).
func NewSlots(size int, p Policy) *Slots {
	size = max(size, 1)
	return &Slots{size: size, share: p.ShareOf(size), burst: p.BurstOf(size), held: map[string]int{}}
}

// Grant is one slot taken by Take, handed back by Release.
type Grant struct {
	Tenant  string
	reserve bool
}

// Held is how many slots tenant holds.
func (s *Slots) Held(tenant string) int { return s.held[tenant] }

// fits reports whether tenant could take a slot now, share aside: a pool
// slot is free, or it holds none and a reserve slot is free.
func (s *Slots) fits(tenant string) bool {
	return s.used < s.size || (s.held[tenant] == 0 && s.burstUsed < s.burst)
}

// Choose returns the index in waiting (tenants that wait, in turn order:
// ties go to the earlier) of the tenant to serve next, false when none may
// take a slot now. While more than one tenant could be served, a tenant at
// its share is passed over; among the rest the one of least cost wins
// (cost nil: the first).
func (s *Slots) Choose(waiting []string, cost func(string) time.Duration) (int, bool) {
	best, bestCost, contenders := -1, time.Duration(0), 0
	var first string
	for _, t := range waiting { // are two different tenants servable?
		if !s.fits(t) {
			continue
		}
		if contenders == 0 {
			first, contenders = t, 1
		} else if t != first {
			contenders = 2
			break
		}
	}
	for i, t := range waiting {
		if !s.fits(t) || (contenders > 1 && s.held[t] >= s.share) {
			continue
		}
		if cost == nil {
			return i, true
		}
		if c := cost(t); best < 0 || c < bestCost {
			best, bestCost = i, c
		}
	}
	return best, best >= 0
}

// Take gives tenant a slot: a pool slot when one is free, else a reserve
// slot. Call it only for a tenant Choose returned.
func (s *Slots) Take(tenant string) Grant {
	s.held[tenant]++
	if s.used < s.size {
		s.used++
		return Grant{Tenant: tenant}
	}
	s.burstUsed++
	return Grant{Tenant: tenant, reserve: true}
}

// Release hands a slot back.
func (s *Slots) Release(g Grant) {
	if s.held[g.Tenant]--; s.held[g.Tenant] <= 0 {
		delete(s.held, g.Tenant)
	}
	if g.reserve {
		s.burstUsed--
	} else {
		s.used--
	}
}
