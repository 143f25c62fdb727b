package embedded

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Attachments declare their charset, and partners mislabel it: UTF-8 bytes
// are read as UTF-8 whatever the declaration says; true Latin-1 and
// Windows-1252 bytes are decoded (the opentrans reader's rules).
func TestParseXMLCharsets(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ doc, want string }{
		"utf-8 declared latin-1": {"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a><n>Müller</n></a>", "Müller"},
		"latin-1":                {"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a><n>M\xfcller</n></a>", "Müller"},
		"windows-1252 euro":      {"<?xml version=\"1.0\" encoding=\"windows-1252\"?><a><n>5 \x80</n></a>", "5 €"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, err := parseXML(t.Context(), []byte(c.doc))
			require.NoError(t, err)
			require.Equal(t, c.want, root.str("n"))
		})
	}
}
