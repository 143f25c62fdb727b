package pogen

import "math/rand/v2"

// rng wraps a seeded PCG so that every draw of a document comes from its seed
// and nothing else (no maps iterated, no clock), which makes Generate
// deterministic.
type rng struct{ *rand.Rand }

func newRng(seed int64) *rng {
	return &rng{rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))}
}

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return r.Float64() < p }

// between returns an int in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// pick returns one element of a non-empty slice.
func pick[T any](r *rng, xs []T) T { return xs[r.IntN(len(xs))] }

// weighted is a choice with a relative weight.
type weighted[T any] struct {
	w int
	v T
}

// pickW draws from weighted choices.
func pickW[T any](r *rng, xs []weighted[T]) T {
	total := 0
	for _, x := range xs {
		total += x.w
	}
	n := r.IntN(total)
	for _, x := range xs {
		if n < x.w {
			return x.v
		}
		n -= x.w
	}
	return xs[len(xs)-1].v
}
