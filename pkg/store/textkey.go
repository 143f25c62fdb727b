package store

import (
	"strings"
	"unicode/utf8"
)

// storableText reports whether PostgreSQL can hold s in a text column: it
// refuses NUL bytes and invalid UTF-8 with an error, so a lookup key that is
// not storable cannot name a stored row and is answered "not found" without
// asking the database (GET /documents/%00 was a 500).
func storableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
