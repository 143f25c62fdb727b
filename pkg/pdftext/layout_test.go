package pdftext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// text lays out s as glyphs of a fixed-pitch 10 pt font (6 pt advance,
// 12 pt loose box) starting at x on baseline y, with content indices from
// idx; spaces become space characters without a box, as pdfium reports them.
func text(s string, x, y float64, idx int) []glyph {
	var gs []glyph
	for i, r := range s {
		left := x + 6*float64(i)
		gs = append(gs, glyph{r: r, x: left, y: y, left: left, right: left + 6, bottom: y - 3, top: y + 9, idx: idx + i})
	}
	return gs
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func TestLayoutRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		chars []glyph
		want  []string
	}{
		{
			// Rule 1: a value 2 pt below its label's baseline (half the
			// 12 pt glyph height is 6 pt) stays on the label's line.
			name:  "baseline tolerance keeps label and value together",
			chars: append(text("Order No:", 0, 700, 0), text("4711", 120, 698, 20)...),
			// "4711" at x 120 is column 120/6 = 20; "Order No:" ends at 9.
			want: []string{"Order No:" + strings.Repeat(" ", 11) + "4711"},
		},
		{
			name:  "baselines further apart than half a glyph are two lines",
			chars: append(text("Order No:", 0, 700, 0), text("4711", 120, 693, 20)...),
			want:  []string{"Order No:", strings.Repeat(" ", 20) + "4711"},
		},
		{
			// Text drawn right column first, then the left one, then a line
			// below: merged by baseline, ordered by x and y.
			name: "columns drawn out of order share a line",
			chars: append(append(append(text("Total", 300, 700, 0), text("Sum", 0, 600, 10)...),
				text("Item", 0, 700, 20)...), text("Qty", 120, 700, 30)...),
			// Qty at column 20, Total at 50; 100 pt down at 14.4 pt per
			// line (1.2 × 12 pt) is 7 lines: 6 blank ones.
			want: []string{"Item" + strings.Repeat(" ", 16) + "Qty" + strings.Repeat(" ", 27) + "Total",
				"", "", "", "", "", "", "Sum"},
		},
		{
			// Rule 2: an underline row drawn after the text overlaps it and
			// is more than 3 characters away in content order.
			name:  "overprinted underline row goes to its own row",
			chars: append(text("Amount", 0, 700, 0), text("______", 0, 698, 10)...),
			want:  []string{"Amount", "______"},
		},
		{
			// Rule 3: the same field drawn twice (Crystal Reports).
			name:  "duplicate glyphs are dropped",
			chars: append(text("4711", 0, 700, 0), text("4711", 0.5, 700, 10)...),
			want:  []string{"4711"},
		},
		{
			// Rule 4: pdfium's soft hyphen at a line end.
			name:  "U+0002 becomes a hyphen",
			chars: text("Liefer\x02", 0, 700, 0),
			want:  []string{"Liefer-"},
		},
		{
			// Rule 5: a gap of 1 character width is a word break (one space),
			// 3 widths is a column gap (padded to the x position).
			name:  "column padding only for wide gaps",
			chars: append(append(text("Qty", 0, 700, 0), text("12", 24, 700, 10)...), text("EUR", 120, 700, 20)...),
			want:  []string{"Qty 12" + strings.Repeat(" ", 14) + "EUR"},
		},
		{
			name:  "explicit space characters separate words",
			chars: text("PO 123", 0, 700, 0),
			want:  []string{"PO 123"},
		},
		{
			name:  "empty page",
			chars: nil,
			want:  []string{""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, lines(layoutPage(tt.chars, box{})))
		})
	}
}

func TestLayoutClipsToPage(t *testing.T) {
	t.Parallel()
	chars := append(text("Inside", 500, 700, 0), text("out", 600, 700, 10)...)
	got := layoutPage(chars, box{0, 0, 595, 842})
	require.Equal(t, []string{"Inside"}, lines(got))
}

func FuzzLayout(f *testing.F) {
	f.Add("Order No: 4711", 0.0, 2.0, 3.0)
	f.Add("____", 0.5, 0.0, -7.0)
	f.Fuzz(func(t *testing.T, s string, dx, dy, scale float64) {
		if len(s) > 200 {
			return
		}
		chars := append(text(s, 0, 700, 0), text(s, dx, 700+dy, 300)...)
		for i := range chars {
			chars[i].right += scale
		}
		out := layoutPage(chars, box{})
		// Bounded: every glyph at most once, plus padding and newlines.
		require.LessOrEqual(t, len([]rune(strings.Join(strings.Fields(out), ""))), len(chars))
	})
}
