package template

// FirstMatch exposes the whole first match of re in s ("" if none) to tests.
func FirstMatch(re *Regex, s string) string {
	m, err := re.search(s)
	if err != nil || m == nil {
		return ""
	}
	return s[m[0]:m[1]]
}

// PyRepr exposes pyRepr to tests.
var PyRepr = pyRepr
