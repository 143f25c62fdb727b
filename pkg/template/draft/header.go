package draft

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// labelAt returns the field whose label starts the cell text (the longest
// label wins) and the label as printed; nil when no label starts it.
func labelAt(text string) (*fieldDef, string) {
	orig := []rune(text)
	rs := []rune(fold(text))
	if len(rs) != len(orig) {
		return nil, ""
	}
	for _, lr := range foldedLabels {
		l := lr.folded
		if len(l) > len(rs) || !slices.Equal(rs[:len(l)], l) {
			continue
		}
		if len(l) < len(rs) && wordRune(rs[len(l)]) && wordRune(l[len(l)-1]) {
			continue // "Totals" is not "Total"
		}
		return lr.Def, string(orig[:len(l)])
	}
	return nil, ""
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isLabelText reports whether a cell's text is a label rather than a value:
// text ending in a colon, a field's label on its own, an order title, or
// one of the headings (party blocks, copy marks, other documents' titles).
// Brackets and a final dot do not change that: "(Bill from)", "FACTUUR.".
func isLabelText(s string) bool {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, ":") {
		return true
	}
	t = strings.TrimSpace(strings.TrimRight(strings.Trim(t, "()[]"), ".:"))
	if t == "" {
		return false
	}
	if d, lbl := labelAt(t); d != nil && lbl == t {
		return true
	}
	if isTitle(t) {
		return true
	}
	ft := fold(t)
	for _, h := range headings {
		if ft == fold(h) {
			return true
		}
	}
	return false
}

// labelsInside finds the amount labels anywhere in a line at word
// boundaries ("zzgl. 19 % MwSt.:"), left to right, the longest at each
// position; each with its field, the label as printed and the rune offset
// after it. A tax label after "ohne"/"excl." is the net total and after
// "inkl."/"incl." the gross one; the label then includes that word.
func labelsInside(line string) []labelHit {
	rs := []rune(line)
	fl := []rune(fold(line))
	if len(fl) != len(rs) {
		return nil
	}
	var out []labelHit
	for i := 0; i < len(rs); i++ {
		if i > 0 && (unicode.IsLetter(rs[i-1]) || unicode.IsDigit(rs[i-1])) {
			continue
		}
		for _, lr := range amountLabels {
			l := lr.folded
			if i+len(l) > len(rs) || !slices.Equal(fl[i:i+len(l)], l) {
				continue
			}
			if e := i + len(l); e < len(rs) && (unicode.IsLetter(rs[e]) || unicode.IsDigit(rs[e])) &&
				(unicode.IsLetter(l[len(l)-1]) || unicode.IsDigit(l[len(l)-1])) {
				continue
			}
			h := labelHit{Def: lr.Def, Label: string(rs[i : i+len(l)]), After: i + len(l)}
			if h.Def.Name == "total_tax" {
				before := string(rs[:i])
				if m := taxExcluded.FindStringIndex(fold(before)); m != nil {
					h.Def, h.Label = fieldByName("total_net"), strings.TrimSpace(string([]rune(before)[len([]rune(fold(before)[:m[0]])):]))+" "+h.Label
				} else if m := taxIncluded.FindStringIndex(fold(before)); m != nil {
					h.Def, h.Label = fieldByName("total_gross"), strings.TrimSpace(string([]rune(before)[len([]rune(fold(before)[:m[0]])):]))+" "+h.Label
				}
			}
			out = append(out, h)
			i += len(l) - 1
			break
		}
	}
	return out
}

// labelHit is an amount label found in a line.
type labelHit struct {
	Def   *fieldDef
	Label string
	After int
}

var (
	taxExcluded = regexp.MustCompile(`(?:^|\s)(?:ohne|excl\.?|exkl\.?|excluding|without|hors|zonder|exclusief|sans)\s+$`)
	taxIncluded = regexp.MustCompile(`(?:^|\s)(?:inkl\.?|incl\.?|including|inclusive|einschl\.?|inclusief|inclus|avec|mit)\s+$`)
)

func fieldByName(name string) *fieldDef {
	for i := range fieldDefs {
		if fieldDefs[i].Name == name {
			return &fieldDefs[i]
		}
	}
	return nil
}

// foldedLabel is a label with its folded runes, for scanning lines.
type foldedLabel struct {
	labelRef
	folded []rune
}

// foldedLabels are all labels, folded, longest first; amountLabels the
// totals' labels among them.
var foldedLabels, amountLabels = func() (all, amounts []foldedLabel) {
	for _, lr := range allLabels {
		f := foldedLabel{lr, []rune(fold(lr.Label))}
		all = append(all, f)
		if lr.Def.Kind == kindAmount {
			amounts = append(amounts, f)
		}
	}
	return all, amounts
}()

// found is a header field found in one sample.
type found struct {
	Name  string
	Label string // as printed
	Value string // as printed
	Regex string
	How   string // "same line", "next cell", "below"
	Line  int
	Extra []*found // a party's address pieces under its name
}

// amountTail matches what may stand between a total's label and its amount
// and after it: blanks, ':', a tax rate, a currency code or sign.
const amountMiddle = `[ \t]*[:#=.]?[ \t]*(?:\d+(?:[.,]\d+)?[ \t]*%[ \t]*[:#=.]?[ \t]*)?(?:(?:[A-Z]{3}|[€$£])[ \t]*[:#=.]?[ \t]*)?`
const amountAfter = `(?:[ \t]*(?:[A-Z]{3}|[€$£]))?[ \t]*$`

// findHeader finds the labelled header fields of one sample, skipping the
// item table's lines.
func findHeader(lines []string, skip func(int) bool, vt valueTypes) map[string]*found {
	out := map[string]*found{}
	amountRe := regexp.MustCompile(`^(` + amountMiddle + `)(` + vt.nc.numberRe() + `)` + amountAfter)
	for i, l := range lines {
		if skip(i) {
			continue
		}
		// Totals: a label anywhere in the line, the amount at its end.
		for _, h := range labelsInside(l) {
			if m := amountRe.FindStringSubmatch(string([]rune(l)[h.After:])); m != nil {
				re := `(?m)` + wordStart(h.Label) + literal(h.Label) + wordEnd(h.Label) + amountMiddle + `(` + vt.nc.numberRe() + `)` + amountAfter
				out[h.Def.Name] = &found{Name: h.Def.Name, Label: h.Label, Value: m[2], Regex: re, How: "same line", Line: i}
				break
			}
		}
		cs := cells(l)
		for ci, c := range cs {
			d, lbl := labelAt(c.Text)
			if d == nil || d.Kind == kindAmount {
				continue
			}
			if f := out[d.Name]; f != nil && !d.Last {
				continue
			}
			if f := findValue(lines, i, cs, ci, d, lbl, vt); f != nil {
				out[d.Name] = f
				for _, e := range f.Extra {
					out[e.Name] = e
				}
			}
		}
	}
	return out
}

// findValue reads a label's value: after the label in its cell, in the
// next cell of the line, or in the cell below the label.
func findValue(lines []string, i int, cs []cell, ci int, d *fieldDef, lbl string, vt valueTypes) *found {
	c := cs[ci]
	rest := string([]rune(c.Text)[len([]rune(lbl)):])
	trimmed := strings.TrimLeft(rest, " \t:#.=°")
	sep := strings.TrimSpace(rest[:len(rest)-len(trimmed)])
	labelRe := wordStart(lbl) + literal(lbl) + wordEnd(lbl)
	// Whatever separates label and value ("PO #:", "Order No. .....",
	// "Date :") may vary in length; the next order prints the same kind.
	sepRe := `[ \t]*`
	if sep != "" {
		sepRe = `[ \t]*[:#.=°][ \t:#.=°]*`
	}
	f := &found{Name: d.Name, Label: lbl, Line: i}
	if trimmed != "" && isLabelText(trimmed) {
		// "Seller (Bill from)": a qualifier of the label; the value is in
		// the next cell or below, as for a label alone.
		trimmed = ""
	}
	if trimmed != "" {
		if v, pat := valueOf(d.Kind, trimmed, vt); v != "" {
			f.Value, f.How = v, "same line"
			f.Regex = capture(d.Kind, labelRe+sepRe, pat)
			return f
		}
		return nil
	}
	if ci+1 < len(cs) {
		next := cs[ci+1]
		if nd, _ := labelAt(next.Text); nd == nil {
			if v, pat := valueOf(d.Kind, next.Text, vt); v != "" {
				f.Value, f.How = v, "next cell"
				f.Regex = capture(d.Kind, labelRe+sepRe, pat)
				return f
			}
		}
	}
	// Below, in the same column: the next line with text (box rules and
	// blank lines in between are skipped).
	skipped := 0
	for j := i + 1; j < len(lines) && j <= i+3; j++ {
		if !hasLetter(lines[j]) && !hasDigit(lines[j]) {
			skipped++
			continue
		}
		below := cells(lines[j])
		best := underCell(below, c)
		if best < 0 {
			return nil
		}
		if (d.Kind == kindName || d.Kind == kindText) && isLabelText(below[best].Text) {
			// A heading under the label ("Vendor" over "(Bill from)"):
			// the value is further down.
			skipped++
			continue
		}
		v, pat := valueOf(d.Kind, below[best].Text, vt)
		if v == "" {
			return nil
		}
		f.Value, f.How = v, "below"
		// The rest of the label's line, the lines in between, then the
		// cells before the value's cell.
		re := labelRe + `[^\n]*\n`
		if skipped > 0 {
			re += fmt.Sprintf(`(?:[^\n]*\n){%d}`, skipped)
		}
		re += `[ \t|]*`
		if best > 0 {
			re += fmt.Sprintf(`(?:[^\s|][^\n|]*?(?:[ \t]{2,}|[ \t]*\|[ \t]*)){%d}`, best)
		}
		f.Regex = capture(d.Kind, re, pat)
		if d.Kind == kindName {
			f.Extra = partyAddress(lines, d.Name, lbl, labelRe, i, j, below[best])
		}
		return f
	}
	return nil
}

// underCell returns the index of the cell in below that overlaps c the
// most (c counts as at least 12 columns wide), or -1 when none overlaps it.
func underCell(below []cell, c cell) int {
	best, bestOv := -1, 0
	for k, bc := range below {
		ov := min(bc.End, max(c.End, c.Start+12)) - max(bc.Start, c.Start)
		if ov > bestOv {
			best, bestOv = k, ov
		}
	}
	return best
}

var (
	idValue  = regexp.MustCompile(`^[^\s|]*\d[^\s|]*`)
	curValue = regexp.MustCompile(`^(?:[A-Z]{3}\b|[€$£])`)
)

// isoCurrencies are codes a currency field may hold.
var symbols = map[string]string{"€": "EUR", "$": "USD", "£": "GBP"}

// valueOf checks that text starts with a value of the kind and returns the
// value and its pattern; "" when it does not.
func valueOf(k kind, text string, vt valueTypes) (string, string) {
	text = strings.TrimSpace(text)
	switch k {
	case kindID:
		v := idValue.FindString(text)
		if v == "" || len([]rune(v)) > 35 {
			return "", ""
		}
		return v, `[^\s|]*\d[^\s|]*`
	case kindDate:
		if m := regexp.MustCompile(`^(?:` + vt.dc.dateRe() + `)`).FindString(text); m != "" && vt.dc.Sep != "" {
			return m, vt.dc.dateRe()
		}
		if m := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`).FindString(text); m != "" {
			return m, `\d{4}-\d{2}-\d{2}`
		}
		if m := regexp.MustCompile(`^` + textDateRe).FindString(text); m != "" {
			return m, textDateRe
		}
	case kindCurrency:
		if v := curValue.FindString(text); v != "" {
			return v, `[A-Z]{3}|[€$£]`
		}
	case kindText, kindName:
		if hasLetter(text) && !isLabelText(text) {
			return text, textPat
		}
	}
	return "", ""
}

// textPat is a text value: one cell, up to two blanks, a bar or the end of
// the line (the capture() suffix).
const textPat = `[^\s|](?:[^\n|]*?[^\s|])??`

// capture appends the value's group to the pattern before it; text values
// end where their cell ends.
func capture(k kind, before, pat string) string {
	if k == kindName || k == kindText {
		return `(?m)` + before + `(` + pat + `)(?:[ \t]{2,}|[ \t]*\||[ \t]*$)`
	}
	return before + `(` + pat + `)`
}
