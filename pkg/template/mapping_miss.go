package template

import (
	"fmt"

	"github.com/docintake/docintake/pkg/order"
)

// MissingMapping is how an outcome deferred for a missing mapping names
// the entry it waits for (its Detail starts with it, then the field):
// what finds the documents waiting for an entry once a person adds it
// (lifecycle.Review.AddMapping).
func MissingMapping(kind, key string) string {
	return fmt.Sprintf("no %s mapping for %q", kind, key)
}

// MappingKey is the value of an item field a mapping looks up (what
// applyMapping reads): a reviewer's page finds the item lines that print a
// missing key with it.
func MappingKey(it *order.Item, field string) string { return itemValue(it, field) }
