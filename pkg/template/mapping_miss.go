package template

import "fmt"

// MissingMapping is how an outcome deferred for a missing mapping names
// the entry it waits for (its Detail starts with it, then the field):
// what finds the documents waiting for an entry once a person adds it
// (lifecycle.Review.AddMapping).
func MissingMapping(kind, key string) string {
	return fmt.Sprintf("no %s mapping for %q", kind, key)
}
