package draft

import (
	"fmt"
	"regexp"
	"strings"
)

// addrPart is one piece of an address line pattern: a regex and the
// canonical suffix it fills ("" for fixed text between pieces).
type addrPart struct {
	Pat  string
	Comp string
}

// addrLine is a kind of address line: how it is recognised and its pieces.
type addrLine struct {
	Re    *regexp.Regexp
	Parts []addrPart
}

func mkLine(parts ...addrPart) addrLine {
	var b strings.Builder
	b.WriteString(`^`)
	for _, p := range parts {
		if p.Comp == "" {
			b.WriteString(p.Pat)
		} else {
			b.WriteString(`(` + p.Pat + `)`)
		}
	}
	b.WriteString(`$`)
	return addrLine{Re: regexp.MustCompile(b.String()), Parts: parts}
}

func lit(s string) addrPart { return addrPart{Pat: s} }

const (
	zipPat    = `(?:[A-Z]{1,2}-)?(?:\d{4} ?[A-Z]{2}|\d{4,5})`
	usZipPat  = `\d{5}(?:-\d{4})?`
	piecePat  = `[^,|\s]+(?: [^,|\s]+)*`
	cityPat   = `[^,\d|\s][^,|\s]*(?: [^,|\s]+)*`
	phonePat  = `\+?\(?\d[\d()/.-]*(?: [\d()/.-]+)+|\+?\d[\d()/.-]{6,}`
	emailPat  = `[^\s@|]+@[^\s@|]+\.[A-Za-z]{2,}`
	labelTel  = `(?i:phone|tel|telefon|téléphone|tél)\.?[ \t]*:?[ \t]*`
	labelMail = `(?i:e-?mail|courriel)[ \t]*:?[ \t]*`
)

// addressLines are the address lines the drafter recognises, tried in
// order: phone, e-mail, US "City, ST 12345" with or without a street
// before it, European "street, 12345 City" and "12345 City", a country.
var addressLines = []addrLine{
	mkLine(lit(labelTel), addrPart{phonePat, "phone"}),
	mkLine(addrPart{phonePat, "phone"}),
	mkLine(lit(labelMail), addrPart{emailPat, "email"}),
	mkLine(addrPart{emailPat, "email"}),
	mkLine(addrPart{piecePat, "street"}, lit(`, `), addrPart{cityPat, "city"}, lit(`, `), addrPart{`[A-Z]{2}`, "state"}, lit(` `), addrPart{usZipPat, "zip"}),
	mkLine(addrPart{cityPat, "city"}, lit(`, `), addrPart{`[A-Z]{2}`, "state"}, lit(` `), addrPart{usZipPat, "zip"}),
	mkLine(addrPart{piecePat, "street"}, lit(`, `), addrPart{zipPat, "zip"}, lit(` `), addrPart{cityPat, "city"}),
	mkLine(addrPart{zipPat, "zip"}, lit(` `), addrPart{cityPat, "city"}),
	mkLine(addrPart{piecePat, "street"}, lit(`, `), addrPart{zipPat, "zip"}, lit(` `), addrPart{cityPat, "city"}, lit(`, `), addrPart{countryCodes, "country_code"}),
	mkLine(addrPart{zipPat, "zip"}, lit(` `), addrPart{cityPat, "city"}, lit(`, `), addrPart{countryCodes, "country_code"}),
	mkLine(addrPart{`(?i:germany|deutschland|france|netherlands|nederland|switzerland|schweiz|suisse|austria|österreich|belgium|belgique|italy|italia|spain|españa|united kingdom|united states|usa)`, "country"}),
	mkLine(addrPart{countryCodes, "country_code"}),
}

const countryCodes = `(?:DE|FR|NL|CH|AT|BE|IT|ES|GB|US|LU|DK|SE|PL|CZ)`

// Indices into addressLines of the first US and the first European line.
const firstUS, firstEU = 4, 6

func digits(s string) int {
	n := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			n++
		}
	}
	return n
}

var (
	faxLine    = regexp.MustCompile(`(?i)^(?:fax|telefax|web|website|www)\b`)
	streetLike = regexp.MustCompile(`\d`)
)

// partyAddress reads the address lines under a party's name (same column,
// up to a blank line, a label or five lines) and returns a field per
// recognised piece, each anchored on the party's label like the name.
func partyAddress(lines []string, nameField, lbl, labelRe string, labelLine, nameLine int, name cell) []*found {
	party := strings.TrimSuffix(nameField, "_name")
	var out []*found
	type plainLine struct {
		line int
		text string
		re   string
	}
	var plain []plainLine
	seen := map[string]bool{}
	// A US "City, ST 12345" line in the block means street numbers may look
	// like European postcodes.
	us := false
	for k := nameLine + 1; k < len(lines) && k <= nameLine+5 && !blank(lines[k]); k++ {
		for _, c := range cells(lines[k]) {
			us = us || addressLines[firstUS].Re.MatchString(c.Text) || addressLines[firstUS+1].Re.MatchString(c.Text)
		}
	}
	for k := nameLine + 1; k < len(lines) && k <= nameLine+5; k++ {
		if blank(lines[k]) {
			break
		}
		cs := cells(lines[k])
		best, bestOv := -1, 0
		for n, c := range cs {
			ov := min(c.End, max(name.End, name.Start+12)) - max(c.Start, name.Start-2)
			if ov > bestOv {
				best, bestOv = n, ov
			}
		}
		if best < 0 {
			break
		}
		text := cs[best].Text
		if d, _ := labelAt(text); d != nil || isLabelText(text) || faxLine.MatchString(text) {
			if d != nil || isLabelText(text) {
				break // the next block's heading
			}
			continue
		}
		re := `(?m)` + labelRe + `[^\n]*\n`
		if n := k - labelLine - 1; n > 0 {
			re += fmt.Sprintf(`(?:[^\n]*\n){%d}`, n)
		}
		re += `[ \t|]*`
		if best > 0 {
			re += fmt.Sprintf(`(?:[^\s|][^\n|]*?(?:[ \t]{2,}|[ \t]*\|[ \t]*)){%d}`, best)
		}
		matched := false
		for ai, al := range addressLines {
			if ai >= firstEU && ai < firstEU+2 && us {
				continue // "10900 Stonelake Blvd" is a US street, not a zip and a city
			}
			if al.Parts[len(al.Parts)-1].Comp == "phone" && digits(text) < 7 {
				continue
			}
			m := al.Re.FindStringSubmatch(text)
			if m == nil {
				continue
			}
			matched = true
			g := 0
			for pi, p := range al.Parts {
				if p.Comp == "" {
					continue
				}
				g++
				comp := party + "_" + p.Comp
				if seen[comp] {
					continue
				}
				seen[comp] = true
				var b strings.Builder
				b.WriteString(re)
				for qi, q := range al.Parts {
					switch {
					case q.Comp == "":
						b.WriteString(q.Pat)
					case qi == pi:
						b.WriteString(`(` + q.Pat + `)`)
					default:
						b.WriteString(`(?:` + q.Pat + `)`)
					}
				}
				b.WriteString(`(?:[ \t]{2,}|[ \t]*\||[ \t]*$)`)
				out = append(out, &found{Name: comp, Label: lbl, Value: m[g], Regex: b.String(), How: fmt.Sprintf("below, line %d of the block", k-nameLine+1), Line: k})
			}
			break
		}
		if !matched {
			plain = append(plain, plainLine{k, text, re})
		}
	}
	// The street is the line with digits right before the postcode line
	// (or the first line with digits without one); the first other line is
	// the second name line (department, contact, company).
	zipLine := -1
	for _, f := range out {
		if strings.HasSuffix(f.Name, "_zip") {
			zipLine = f.Line
		}
	}
	street := -1
	for _, pl := range plain {
		// A line with commas or separators that no address pattern
		// read ("Hafenstraße 12 · 20457 Hamburg · USt-IdNr. …") is not
		// a street.
		if streetLike.MatchString(pl.text) && !strings.ContainsAny(pl.text, ",·:;") && len([]rune(pl.text)) <= 40 &&
			(zipLine < 0 && street < 0 || pl.line == zipLine-1) {
			street = pl.line
		}
	}
	name2 := false
	for _, pl := range plain {
		comp := party + "_street"
		if pl.line != street {
			if name2 || zipLine >= 0 && pl.line > zipLine || strings.ContainsAny(pl.text, ",·:;") {
				continue
			}
			comp, name2 = party+"_name2", true
		}
		if seen[comp] {
			continue
		}
		seen[comp] = true
		out = append(out, &found{Name: comp, Label: lbl, Value: pl.text, Regex: pl.re + `(` + textPat + `)(?:[ \t]{2,}|[ \t]*\||[ \t]*$)`,
			How: fmt.Sprintf("below, line %d of the block", pl.line-nameLine+1), Line: pl.line})
	}
	return out
}
