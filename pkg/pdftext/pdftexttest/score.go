package pdftexttest

import (
	"regexp"
	"strings"
)

// Score compares a candidate layout text with a reference (normally the
// output of `pdftotext -layout`).
type Score struct {
	// WordRecall is the share of the reference's whitespace-separated words
	// found in the candidate, counted as multisets (a word printed twice in
	// the reference must appear twice). 1 when the reference has no words.
	WordRecall float64
	// RefWords is the number of words in the reference.
	RefWords int
	// LabelValue is the share of label/value pairs of the reference that sit
	// on one line in the candidate too. A pair is a word ending in ':'
	// (longer than the colon) and the word right after it on the same
	// reference line; the candidate agrees when one of its lines contains
	// the label followed, anywhere later on that line, by the value. 1 when
	// the reference has no pairs.
	LabelValue float64
	// Pairs is the number of label/value pairs in the reference.
	Pairs int
	// Columns is the share of column pairs of the reference that the
	// candidate keeps on one line in the same order: the words either side
	// of a column gap (three or more spaces) on a reference line, such as a
	// label and its value in the next column, or two cells of a table row.
	// 1 when the reference has none.
	Columns float64
	// ColumnPairs is the number of column pairs in the reference.
	ColumnPairs int
	// Missing lists up to 10 reference words the candidate lacks, and
	// Split up to 10 label/value pairs it does not keep on one line, for
	// test logs.
	Missing []string
	Split   []string
}

// Compare scores candidate against reference.
func Compare(reference, candidate string) Score {
	var s Score
	ref := strings.Fields(reference)
	s.RefWords = len(ref)
	have := map[string]int{}
	for _, w := range strings.Fields(candidate) {
		have[w]++
	}
	found := 0
	for _, w := range ref {
		if have[w] > 0 {
			have[w]--
			found++
		} else if len(s.Missing) < 10 {
			s.Missing = append(s.Missing, w)
		}
	}
	s.WordRecall = ratio(found, len(ref))

	candLines := splitLines(candidate)
	agree := 0
	for _, line := range splitLines(reference) {
		ws := strings.Fields(line)
		for i := 0; i+1 < len(ws); i++ {
			label := ws[i]
			if len(label) < 2 || !strings.HasSuffix(label, ":") {
				continue
			}
			value := ws[i+1]
			s.Pairs++
			if sameLine(candLines, label, value) {
				agree++
			} else if len(s.Split) < 10 {
				s.Split = append(s.Split, label+" "+value)
			}
		}
	}
	s.LabelValue = ratio(agree, s.Pairs)

	together := 0
	for _, line := range splitLines(reference) {
		cells := columnGap.Split(strings.TrimSpace(line), -1)
		for i := 0; i+1 < len(cells); i++ {
			left, right := strings.Fields(cells[i]), strings.Fields(cells[i+1])
			s.ColumnPairs++
			if sameLine(candLines, left[len(left)-1], right[0]) {
				together++
			}
		}
	}
	s.Columns = ratio(together, s.ColumnPairs)
	return s
}

var columnGap = regexp.MustCompile(`\s{3,}`)

func splitLines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\f' })
}

func sameLine(lines []string, label, value string) bool {
	for _, l := range lines {
		ws := strings.Fields(l)
		for i, w := range ws {
			if w != label {
				continue
			}
			for _, v := range ws[i+1:] {
				if v == value {
					return true
				}
			}
		}
	}
	return false
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}
