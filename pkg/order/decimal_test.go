package order

import "testing"

func TestCanonicalDecimal(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"1": "1", "+1.": "1", ".5": "0.5", "-2.50": "-2.50", "007": "7", "-.5": "-0.5",
		"+0012.50": "12.50", "7.": "7", "-0.00": "0.00", "0": "0", "-0": "0",
	} {
		got, ok := CanonicalDecimal(in)
		if !ok || got != want {
			t.Errorf("CanonicalDecimal(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ".", "+", "-", "1,5", "1e3", "1.2.3", "NaN", "- 1", " 1", "1 ", "1_000", "0x10", "١"} {
		if got, ok := CanonicalDecimal(in); ok {
			t.Errorf("CanonicalDecimal(%q) = %q, accepted", in, got)
		}
	}
}
