package template

// ToleranceFor is the largest difference the checks accept for an order
// in currency, as a decimal ("0.005" for EUR): what a page that re-runs
// the checks as a person types (the ops console's review page) compares
// with, so it agrees with CheckOrder.
func (c Checks) ToleranceFor(currency string) string { return dec(c.tolerance(currency)) }
