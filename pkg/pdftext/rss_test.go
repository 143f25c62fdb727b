package pdftext

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// peakRSS reads VmHWM (peak resident set size) of the test process from
// /proc; ok is false where /proc is not available.
func peakRSS(t *testing.T) (int64, bool) {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
