package system

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// DefaultGC sets the defaults only where the environment is silent.
func TestDefaultGC(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })

	DefaultGC(func(string) string { return "" })
	require.Equal(t, DefaultGCPercent, debug.SetGCPercent(100))
	require.Equal(t, int64(DefaultMemoryLimit), debug.SetMemoryLimit(math.MaxInt64))

	env := map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}
	DefaultGC(func(k string) string { return env[k] })
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: left alone")
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1), "GOMEMLIMIT set: left alone")
}
