package system

import (
	"runtime/debug"
)

// GC defaults of the worker services (processor, dispatcher), applied by
// DefaultGC when the environment leaves GOGC or GOMEMLIMIT unset.
const (
	// DefaultGCPercent halves the collector's work against Go's 100: the
	// workers' live heap is small (≈ 10–20 MiB), so a heap goal of three
	// times it costs little memory, and GC was ≈ 6 % of the processor's Go
	// CPU per document in `make bench -profile`.
	DefaultGCPercent = 200
	// DefaultMemoryLimit is the soft limit that makes the collector work
	// harder before the heap grows past it (a large PDF), so the larger
	// GOGC does not raise the peak RSS that BENCHMARKS.md bounds (processor
	// ≤ 150 MiB).
	DefaultMemoryLimit = 128 << 20
)

// DefaultGC sets DefaultGCPercent and DefaultMemoryLimit unless GOGC or
// GOMEMLIMIT are set in getenv (the runtime has applied those already; an
// operator's value always wins, "GOGC=off" included).
func DefaultGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
}
